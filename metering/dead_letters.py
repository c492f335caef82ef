"""Usage dead letters: stream entries metering could not book, kept with their error until replayed.

The consumer (metering.consumer) sets an entry aside here when it is not an event at all, when its
tenant is unknown, or when its ingest still fails alone after the batch was split around it. Each
dead letter keeps the entry as it was read, where it came from and why it failed; the total ever set
aside is counted. ``python manage.py usage_dead_letters`` lists, repairs and replays them: a replay
goes through the same idempotent ingest (one booking per request id), and a letter is deleted only
once its event is in the books (booked now, or found booked before).

Stream ``DEAD_LETTER_STREAM`` fields: ``e`` (the entry's payload, as read), ``stream`` and ``id`` (its
source), ``error``, ``at`` (epoch seconds). Letters written before payloads were kept carry only
``id`` (the source entry ids, comma-joined): they are listed, and cannot be replayed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
import psycopg
import redis
from django.db import DataError, IntegrityError

from contracts.redis_keys import USAGE_STREAM
from metering.ingest import IngestResult, event_parse, usage_ingest

DEAD_LETTER_STREAM = f"{USAGE_STREAM}:dead"
DEAD_LETTER_TOTAL = f"{USAGE_STREAM}:dead:total"  # entries ever set aside (a counter; replays do not lower it)
# A bound on Redis memory should something flood it; the total above still counts what a trim dropped.
DEAD_LETTER_MAXLEN = 100_000
ERROR_CHARS = 500  # the first line of an error says what failed; the rest is a traceback's worth of noise
LIST_LIMIT = 1_000  # letters read per listing or replay run (an operator pages with ``--after``)

# An entry (or a batch) whose ingest raises one of these holds a value that cannot be booked; PostgreSQL
# being away (OperationalError, InterfaceError) is not among them: that batch is retried whole.
UNBOOKABLE = (
    DataError,
    IntegrityError,
    psycopg.DataError,
    psycopg.IntegrityError,
    ValueError,
    TypeError,
    KeyError,
    ArithmeticError,
)


@dataclass(frozen=True, slots=True)
class Unbookable:
    """One stream entry set aside, before it is written to the dead-letter stream."""

    entry_id: bytes
    payload: bytes | None
    error: str


@dataclass(frozen=True, slots=True)
class DeadLetter:
    dead_id: str
    payload: bytes | None
    source_stream: str
    source_id: str
    error: str
    at: float

    @property
    def request_id(self) -> str:
        """The event's request id when the payload is a JSON object that names one ("" otherwise)."""
        try:
            data = orjson.loads(self.payload or b"")
        except orjson.JSONDecodeError:
            return ""
        value = data.get("request_id") if isinstance(data, dict) else None
        return value if isinstance(value, str) else ""


@dataclass
class ReplayOutcome:
    booked: list[str] = field(default_factory=list)  # request ids booked by this replay
    already: list[str] = field(default_factory=list)  # request ids found in the books before it
    failed: list[tuple[str, str]] = field(default_factory=list)  # (dead id, error): kept for another try
    results: list[IngestResult] = field(default_factory=list)


def error_text(exc: BaseException | str) -> str:
    if isinstance(exc, str):
        return exc[:ERROR_CHARS]
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}"[:ERROR_CHARS]


def dead_letters_add(client: redis.Redis, *, stream: str, letters: list[Unbookable]) -> None:
    """Keep each entry with its error; written before the source entries are acknowledged (a crash in
    between writes a letter twice, which a replay books once)."""
    if not letters:
        return
    pipe = client.pipeline(transaction=False)
    now = f"{time.time():.3f}"
    for letter in letters:
        fields: dict[str, bytes | str] = {"stream": stream, "id": letter.entry_id, "error": letter.error, "at": now}
        if letter.payload is not None:
            fields["e"] = letter.payload
        pipe.xadd(DEAD_LETTER_STREAM, fields, maxlen=DEAD_LETTER_MAXLEN, approximate=True)  # type: ignore[arg-type]
    pipe.incrby(DEAD_LETTER_TOTAL, len(letters))
    pipe.execute()


def dead_letters_list(client: redis.Redis, *, after: str = "-", limit: int = LIST_LIMIT) -> list[DeadLetter]:
    start = after if after == "-" else f"({after}"
    rows: Any = client.xrange(DEAD_LETTER_STREAM, start, "+", limit)
    return [_letter(entry_id, fields) for entry_id, fields in rows]


def dead_letter_get(client: redis.Redis, dead_id: str) -> DeadLetter | None:
    rows: Any = client.xrange(DEAD_LETTER_STREAM, dead_id, dead_id)
    return _letter(*rows[0]) if rows else None


def dead_letters_waiting(client: redis.Redis) -> int:
    """Letters not yet replayed: what /healthz, /metrics and reconcile show."""
    return int(client.xlen(DEAD_LETTER_STREAM))


def dead_letters_total(client: redis.Redis) -> int:
    return int(client.get(DEAD_LETTER_TOTAL) or 0)


def dead_letter_repair(client: redis.Redis, *, dead_id: str, changes: dict[str, Any]) -> DeadLetter:
    """A repaired copy of a letter replaces it: ``changes`` names event fields, dotted into the nested
    ones (``tokens.output``); no change at all keeps the payload, which the replay makes storable."""
    letter = dead_letter_get(client, dead_id)
    if letter is None:
        raise LookupError(f"no dead letter {dead_id}")
    if letter.payload is None:
        raise ValueError(f"dead letter {dead_id} kept no payload (written before payloads were kept)")
    data = orjson.loads(letter.payload)
    if not isinstance(data, dict):
        raise ValueError(f"dead letter {dead_id} is not a JSON object")
    for name, value in changes.items():
        _assign(data, name.split("."), value)
    payload = orjson.dumps(data)
    fields = {"e": payload, "stream": letter.source_stream, "id": letter.source_id, "at": f"{time.time():.3f}",
              "error": error_text(f"repaired from {dead_id}: {letter.error}")}  # fmt: skip
    new_id = client.xadd(DEAD_LETTER_STREAM, fields)  # type: ignore[arg-type]
    client.xdel(DEAD_LETTER_STREAM, dead_id)
    repaired = dead_letter_get(client, new_id.decode() if isinstance(new_id, bytes) else str(new_id))
    assert repaired is not None
    return repaired


def dead_letters_replay(client: redis.Redis, *, ids: Iterable[str] = ()) -> ReplayOutcome:
    """Book each letter (all, or those named) once; a letter that still fails stays, with its error."""
    wanted = list(ids)
    letters = [dead_letter_get(client, i) for i in wanted] if wanted else dead_letters_list(client)
    outcome = ReplayOutcome()
    for letter in letters:
        if letter is not None:
            _replay_one(client, letter, outcome)
    return outcome


def _replay_one(client: redis.Redis, letter: DeadLetter, outcome: ReplayOutcome) -> None:
    if letter.payload is None:
        outcome.failed.append((letter.dead_id, "no payload kept"))
        return
    try:
        event = event_parse(letter.payload)
        result = usage_ingest(events=[event])
    except UNBOOKABLE as exc:
        outcome.failed.append((letter.dead_id, error_text(exc)))
        return
    if result.rejected:
        outcome.failed.append((letter.dead_id, ", ".join(reason for _, reason in result.rejected)))
        return
    (outcome.booked if result.inserted else outcome.already).append(event.request_id)
    outcome.results.append(result)
    client.xdel(DEAD_LETTER_STREAM, letter.dead_id)  # after the commit: a crash before it replays a booked event


def _assign(data: dict[str, Any], path: list[str], value: Any) -> None:
    for name in path[:-1]:
        inner = data.get(name)
        if not isinstance(inner, dict):
            inner = data[name] = {}
        data = inner
    data[path[-1]] = value


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _letter(entry_id: bytes | str, fields: dict[bytes, bytes]) -> DeadLetter:
    try:
        at = float(_text(fields.get(b"at")) or 0)
    except ValueError:
        at = 0.0
    return DeadLetter(
        dead_id=_text(entry_id),
        payload=fields.get(b"e"),
        source_stream=_text(fields.get(b"stream")),
        source_id=_text(fields.get(b"id")),
        error=_text(fields.get(b"error")) or "not an event (payload not kept)",
        at=at,
    )
