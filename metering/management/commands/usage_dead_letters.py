"""``python manage.py usage_dead_letters list|repair|replay``: usage events metering set aside.

``list`` prints each letter (its id, source entry, request id, error and payload); ``repair ID
--set FIELD=VALUE`` replaces a letter with a corrected copy (a JSON value, or text; dotted names reach
into ``tokens`` and ``prices``); ``replay [ID ...]`` books letters through the same idempotent ingest
and removes those in the books, so each event is billed once however often it is replayed.
Exits non-zero when a replay leaves letters that still fail.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser

from foundation.redis_client import get_redis
from metering.console_push import ingest_followup
from metering.dead_letters import (
    DeadLetter,
    dead_letter_repair,
    dead_letters_list,
    dead_letters_replay,
    dead_letters_total,
    dead_letters_waiting,
)

PAYLOAD_PREVIEW_CHARS = 400  # enough to see the fields at fault; ``--full`` prints it whole


class Command(BaseCommand):
    help = "List, repair and replay usage dead letters (each event is billed once)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        listing = actions.add_parser("list", help="print the letters waiting")
        listing.add_argument("--after", default="-", help="only letters after this id (paging)")
        listing.add_argument("--full", action="store_true", help="print payloads whole")
        repair = actions.add_parser("repair", help="replace a letter with a corrected copy")
        repair.add_argument("dead_id")
        repair.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", dest="changes")
        replay = actions.add_parser("replay", help="book letters (all, or the ids given) once")
        replay.add_argument("ids", nargs="*")

    def handle(self, *args: Any, **options: Any) -> None:
        client = get_redis()
        action = options["action"]
        if action == "list":
            letters = dead_letters_list(client, after=options["after"])
            for letter in letters:
                self.stdout.write(_line(letter, full=options["full"]))
            total = dead_letters_total(client)
            self.stdout.write(f"{dead_letters_waiting(client)} waiting, {total} set aside since counting began")
        elif action == "repair":
            changes = dict(_change(text) for text in options["changes"])
            try:
                repaired = dead_letter_repair(client, dead_id=options["dead_id"], changes=changes)
            except (LookupError, ValueError) as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"repaired as {repaired.dead_id}")
            self.stdout.write(_line(repaired, full=True))
        else:
            outcome = dead_letters_replay(client, ids=options["ids"])
            for result in outcome.results:
                ingest_followup(result)  # balances and the console, as the consumer does after a batch
            for dead_id, error in outcome.failed:
                self.stdout.write(f"still failing\t{dead_id}\t{error}")
            self.stdout.write(
                f"booked {len(outcome.booked)}, already booked {len(outcome.already)}, failed {len(outcome.failed)}"
            )
            if outcome.failed:
                raise CommandError(f"{len(outcome.failed)} letter(s) still fail; repair them and replay")


def _change(text: str) -> tuple[str, Any]:
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise CommandError(f"--set takes FIELD=VALUE, not {text!r}")
    try:
        return name, orjson.loads(raw)
    except orjson.JSONDecodeError:
        return name, raw  # plain text: --set model=deepseek-v3.2


def _line(letter: DeadLetter, *, full: bool) -> str:
    at = datetime.fromtimestamp(letter.at, tz=UTC).isoformat(timespec="seconds") if letter.at else "-"
    payload = (letter.payload or b"").decode("utf-8", "replace")
    if not full and len(payload) > PAYLOAD_PREVIEW_CHARS:
        payload = payload[:PAYLOAD_PREVIEW_CHARS] + "..."
    source = f"{letter.source_stream}/{letter.source_id}"
    return f"{letter.dead_id}\t{at}\t{source}\t{letter.request_id or '-'}\t{letter.error}\t{payload}"
