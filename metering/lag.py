"""How far billing is behind, read when /metrics is scraped (docs/operations.md names the alerts).

Usage stream: entries the metering group has not yet taken (``lag``), taken but not acknowledged
(``pending``), and the age of the oldest such entry (an entry id is its arrival time in ms), so
"request end to ledger" lag is one number. Each usage shard (``TOKENWAY_USAGE_SHARDS``) is measured
on its own; the total sums the counts and keeps the oldest age. Stripe: meter events not yet accepted, their oldest
age, and those Stripe rejected or that expired unsent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import redis
from django.db.models import Count, Min, Q
from django.utils import timezone

from contracts import redis_keys
from metering.models import MeterEvent, MeterStatus

UNDELIVERED_COUNT_BOUND = 100_000  # entries counted one by one where Redis gives no lag figure


@dataclass(frozen=True, slots=True)
class StreamLag:
    length: int
    undelivered: int
    pending: int
    oldest_unbilled_s: float  # 0 when everything is acknowledged


@dataclass(frozen=True, slots=True)
class MeterLag:
    unsent: int
    oldest_unsent_s: float
    rejected: int
    expired: int


def _entry_age_s(entry_id: bytes | str | None, now_ms: int) -> float:
    if not entry_id:
        return 0.0
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return max(0.0, (now_ms - int(text.split("-")[0])) / 1000)


def usage_stream_lag(
    client: redis.Redis, stream: str = redis_keys.USAGE_STREAM, group_name: str = redis_keys.USAGE_GROUP
) -> StreamLag:
    length = int(client.xlen(stream))
    group = (
        next(
            (g for g in client.xinfo_groups(stream) if g["name"] in (group_name, group_name.encode())),
            None,
        )
        if length or client.exists(stream)
        else None
    )
    if group is None:
        return StreamLag(length, length, 0, 0.0)
    now_ms = int(time.time() * 1000)
    pending = int(group["pending"])
    after = group["last-delivered-id"]
    after = after.decode() if isinstance(after, bytes) else after
    lag = group.get("lag")
    if lag is None:  # Redis before 7.0 (or after a trim) reports none: count what follows, bounded
        lag = len(client.xrange(stream, min=f"({after}", count=UNDELIVERED_COUNT_BOUND) or ())
    undelivered = int(lag)
    oldest = 0.0
    if pending:
        summary = client.xpending(stream, group_name)
        oldest = _entry_age_s(summary.get("min"), now_ms)
    elif undelivered:
        first = client.xrange(stream, min=f"({after}", count=1)
        oldest = _entry_age_s(first[0][0] if first else None, now_ms)
    return StreamLag(length, undelivered, pending, oldest)


def usage_lag_by_stream(client: redis.Redis, streams: list[str] | None = None) -> dict[str, StreamLag]:
    """Lag of each shard stream (every configured shard when ``streams`` is None), one slot per call."""
    names = redis_keys.usage_streams(redis_keys.usage_shard_count_from_env()) if streams is None else streams
    return {stream: usage_stream_lag(client, stream) for stream in names}


def lag_total(lags: dict[str, StreamLag]) -> StreamLag:
    """Every shard together: counts add up, the age is the oldest shard's."""
    values = list(lags.values())
    return StreamLag(
        length=sum(lag.length for lag in values),
        undelivered=sum(lag.undelivered for lag in values),
        pending=sum(lag.pending for lag in values),
        oldest_unbilled_s=max((lag.oldest_unbilled_s for lag in values), default=0.0),
    )


def meter_lag() -> MeterLag:
    figures = MeterEvent.objects.aggregate(
        unsent=Count("pk", filter=Q(status=MeterStatus.PENDING)),
        oldest=Min("created_at", filter=Q(status=MeterStatus.PENDING)),
        rejected=Count("pk", filter=Q(status=MeterStatus.REJECTED)),
        expired=Count("pk", filter=Q(status=MeterStatus.EXPIRED)),
    )
    oldest = figures["oldest"]
    age = (timezone.now() - oldest).total_seconds() if oldest else 0.0
    return MeterLag(figures["unsent"], max(0.0, age), figures["rejected"], figures["expired"])
