"""The metering consumer: the usage streams (one per shard) -> ledger, acked only after commit.

At-least-once delivery from each stream (XREADGROUP + XACK after the PostgreSQL
commit, XAUTOCLAIM of entries left pending by a dead consumer) plus the
idempotent ingest (unique request id) gives exactly-once billing. No single entry
can stop it: a batch whose ingest fails on a value that cannot be booked is split
in halves until the entry that fails is alone, and that entry goes to the dead
letters (metering.dead_letters) with its error while the rest is booked. Every consumer
reads every shard (``TOKENWAY_USAGE_SHARDS``, contracts.redis_keys), each shard
with its own consumer group; a batch is one shard's entries, so its XACK names one
stream (one cluster slot) and its size stays ``BATCH_SIZE``.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import redis
from django.db import DatabaseError, InterfaceError, OperationalError, close_old_connections, connections

from contracts.redis_keys import USAGE_GROUP, usage_shard_count_from_env, usage_streams
from contracts.usage import UsageEvent
from foundation.env import env_int
from metering.console_push import ingest_followup
from metering.crash import crash_point
from metering.dead_letters import DEAD_LETTER_STREAM, UNBOOKABLE, Unbookable, dead_letters_add, error_text
from metering.ingest import IngestResult, event_parse, usage_ingest
from metering.ingest_traces import consumer_tracer, traced_batch, traced_ingest

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

logger = logging.getLogger(__name__)

# 500 events x ~35 columns stays far below PostgreSQL's 65,535 bind parameters per statement.
BATCH_SIZE = 500
# An entry idle this long in another consumer's pending list belongs to a dead consumer
# (a batch takes well under a second); tests shorten it.
CLAIM_MIN_IDLE_MS = env_int("TOKENWAY_CLAIM_MIN_IDLE_MS", 15_000)
# Long enough to batch under load, short enough to keep billing latency well under a second.
BLOCK_MS = 200
# PostgreSQL away (restart, failover): wait this long, doubling up to the cap, then retry the same
# batch (it is still pending under our name); the stream keeps what arrives meanwhile.
DB_RETRY_FIRST_S = 0.5
DB_RETRY_MAX_S = 5.0

Entry = tuple[bytes, dict[bytes, bytes]]
Batches = list[tuple[str, list[Entry]]]  # (stream, its entries), only streams that gave some
Parsed = tuple[bytes, bytes, UsageEvent]  # (entry id, payload, event)

__all__ = ["DEAD_LETTER_STREAM", "UsageConsumer", "group_ensure"]


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def configured_streams() -> list[str]:
    """The shard streams this deployment has (TOKENWAY_USAGE_SHARDS, as the gateways read it)."""
    return usage_streams(usage_shard_count_from_env())


def group_ensure(client: redis.Redis, streams: list[str] | None = None) -> None:
    for stream in configured_streams() if streams is None else streams:
        try:
            client.xgroup_create(stream, USAGE_GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise


def database_backoff(exc: Exception, wait_s: float) -> float:
    """PostgreSQL is unreachable: drop the broken connection, sleep, and return the next wait."""
    first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    logger.warning("database unavailable (%s); retrying in %.1fs", first_line, wait_s)
    with suppress(DatabaseError):
        connections.close_all()
    time.sleep(wait_s)
    return min(wait_s * 2, DB_RETRY_MAX_S)


@dataclass
class UsageConsumer:
    client: redis.Redis
    name: str
    after_batch: Callable[[IngestResult], None] = ingest_followup
    ingest: Callable[..., IngestResult] = usage_ingest  # the ledger write (a seam for outage tests)
    streams: list[str] = field(default_factory=configured_streams)
    tracer: Tracer | None = field(default_factory=consumer_tracer)  # None while traces are off (contracts.tracing)
    _turn: int = field(default=0, init=False)  # the shard the next idle wait blocks on

    def __post_init__(self) -> None:
        if self.tracer is not None:
            self.ingest = traced_ingest(self.tracer, self.ingest)  # one span per event (metering.ingest_traces)

    def claim_stale(self) -> Batches:
        """Entries a crashed consumer read but never acked, per shard."""
        pipe = self.client.pipeline(transaction=False)  # one round trip per node, whatever the shard count
        for stream in self.streams:
            pipe.xautoclaim(
                stream, USAGE_GROUP, self.name, min_idle_time=CLAIM_MIN_IDLE_MS, start_id="0-0", count=BATCH_SIZE
            )
        # each reply: [next id, entries] (Redis 6.2) or [next id, entries, deleted ids] (7+)
        return _batches(zip(self.streams, (reply[1] for reply in pipe.execute()), strict=True))

    def own_pending(self) -> Batches:
        """After a restart under the same name (or a failed batch), our own unacked entries come first."""
        return self._read_each("0")

    def read_new(self, block_ms: int | None) -> Batches:
        if len(self.streams) > 1:
            batches = self._read_each(">")
            if batches or block_ms is None:
                return batches
        # Nothing anywhere: wait on one shard (in turn; one XREADGROUP cannot span cluster slots).
        stream = self.streams[self._turn % len(self.streams)]
        self._turn += 1
        reply: Any = self.client.xreadgroup(USAGE_GROUP, self.name, {stream: ">"}, count=BATCH_SIZE, block=block_ms)
        return _batches([(stream, reply[0][1] if reply else [])])

    def _read_each(self, offset: str) -> Batches:
        pipe = self.client.pipeline(transaction=False)
        for stream in self.streams:
            pipe.xreadgroup(USAGE_GROUP, self.name, {stream: offset}, count=BATCH_SIZE)
        replies: list[Any] = pipe.execute()
        return _batches(zip(self.streams, (reply[0][1] if reply else [] for reply in replies), strict=True))

    def process(self, stream: str, entries: list[Entry]) -> IngestResult:
        if self.tracer is None:  # traces off: this check is all they cost
            return self._process(stream, entries)
        return traced_batch(self.tracer, stream, len(entries), lambda: self._process(stream, entries))

    def _process(self, stream: str, entries: list[Entry]) -> IngestResult:
        crash_point("after_receipt")
        parsed, dead = self._parse(entries)
        close_old_connections()
        result = self._ingest_isolating(parsed, dead)
        crash_point("after_ledger")
        dead += _unknown_tenants(parsed, result)
        # Before the XACK: a crash in between leaves an entry pending (and dead-lettered again), never lost.
        dead_letters_add(self.client, stream=stream, letters=dead)
        self.client.xack(stream, USAGE_GROUP, *[entry_id for entry_id, _ in entries])
        if dead:
            logger.error("usage entries dead-lettered: %s", [(d.entry_id, d.error) for d in dead[:20]])
        self.after_batch(result)
        return result

    def _ingest_isolating(self, parsed: list[Parsed], dead: list[Unbookable]) -> IngestResult:
        """Ingest the batch; when a value in it cannot be booked, split it in halves and ingest each, down
        to the one entry that fails alone (dead-lettered). One bad entry of n costs about 2·log2(n) more
        transactions; each attempt rolled back wholly, and the halves that commit are booked once."""
        if not parsed:
            return IngestResult()
        try:
            return self.ingest(events=[event for _, _, event in parsed])
        except UNBOOKABLE as exc:
            if len(parsed) == 1:
                entry_id, payload, _ = parsed[0]
                dead.append(Unbookable(entry_id, payload, error_text(exc)))
                return IngestResult()
            logger.warning("usage batch of %d unbookable (%s); splitting it", len(parsed), error_text(exc))
        half = len(parsed) // 2
        return _merged(self._ingest_isolating(parsed[:half], dead), self._ingest_isolating(parsed[half:], dead))

    def _parse(self, entries: list[Entry]) -> tuple[list[Parsed], list[Unbookable]]:
        parsed: list[Parsed] = []
        dead: list[Unbookable] = []
        for entry_id, fields in entries:
            payload = fields.get(b"e")
            try:
                parsed.append((entry_id, payload or b"", event_parse(fields[b"e"])))
            except UNBOOKABLE as exc:
                logger.error("malformed usage entry %s: %s", entry_id, exc)
                dead.append(Unbookable(entry_id, payload, error_text(exc)))
        return parsed, dead

    def step(self, block_ms: int | None) -> int:
        """One unit of work: own pending, else stale claims, else new entries. Returns entries handled."""
        batches = self.own_pending() or self.claim_stale() or self.read_new(block_ms)
        for stream, entries in batches:
            self.process(stream, entries)
        return sum(len(entries) for _, entries in batches)

    def run(self, *, until: float | None = None, block_ms: int = BLOCK_MS) -> int:
        """Loop until the monotonic deadline (forever when None); survives Redis restarts."""
        handled = 0
        group_ready = False
        db_wait = DB_RETRY_FIRST_S
        while until is None or time.monotonic() < until:
            try:
                if not group_ready:
                    group_ensure(self.client, self.streams)
                    group_ready = True
                handled += self.step(block_ms)
                db_wait = DB_RETRY_FIRST_S
            except redis.ConnectionError:
                logger.warning("redis unavailable; retrying")
                group_ready = False
                time.sleep(0.5)
            except redis.ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
                group_ready = False
            except (OperationalError, InterfaceError) as exc:
                db_wait = database_backoff(exc, db_wait)
        return handled


def _unknown_tenants(parsed: list[Parsed], result: IngestResult) -> list[Unbookable]:
    """Events of a tenant PostgreSQL does not know: set aside, not dropped (a repair names the tenant)."""
    refused = dict(result.rejected)
    return [
        Unbookable(entry_id, payload, refused[event.request_id])
        for entry_id, payload, event in parsed
        if event.request_id in refused
    ]


def _merged(first: IngestResult, second: IngestResult) -> IngestResult:
    return IngestResult(
        inserted=first.inserted + second.inserted,
        duplicates=first.duplicates + second.duplicates,
        rejected=first.rejected + second.rejected,
        tenant_ids=first.tenant_ids | second.tenant_ids,
    )


def _batches(pairs: Any) -> Batches:
    """Keep the streams that gave entries, without the ids of entries deleted meanwhile (no fields)."""
    batches = []
    for stream, entries in pairs:
        kept = [entry for entry in entries if entry[1]]
        if kept:
            batches.append((stream, kept))
    return batches
