"""Probe schedule state in Redis: one sorted set member per (region, kind, offering), scored by due time.

The dispatcher (one at a time, under a lock) adds members for new offerings at a
random point of their first interval, removes members of vanished offerings, and
claims the due ones, giving each a new due time with jitter that never pushes the
gap past the interval.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import redis

from evaluation import conf
from evaluation.beat import DISPATCH_PERIOD_S
from evaluation.models import ProbeKind, ProbePolicy
from evaluation.probes.registry import kinds_for

DUE_KEY = "tw:eval:due"  # ZSET "region|kind|offering_id" -> epoch seconds when due
LOCK_KEY = "tw:eval:dispatch:lock"
# Most members claimed per run; bounds the work of one dispatcher call (4k offering-regions x 5 kinds / 5 min fits).
CLAIM_LIMIT = 20_000
# Probes whose verdicts flag an offering as dishonest or degraded (price truth, token count, canaries).
INTEGRITY_KINDS = frozenset({ProbeKind.PRICE, ProbeKind.QUALITY})


@dataclass(frozen=True, slots=True)
class Due:
    region: str
    kind: str
    offering_id: int


def _text(raw: object) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def member(region: str, kind: str, offering_id: int) -> str:
    return f"{region}|{kind}|{offering_id}"


def parse_member(raw: bytes | str) -> Due:
    text = raw.decode() if isinstance(raw, bytes) else raw
    region, kind, offering_id = text.split("|")
    return Due(region, kind, int(offering_id))


def _interval(kind: str, policy: ProbePolicy | None) -> int:
    if kind == ProbeKind.PERFORMANCE:
        return (policy and policy.performance_interval_s) or conf.performance_interval_s()
    return (policy and policy.hourly_interval_s) or conf.hourly_interval_s()


def next_due(now: float, interval: int, rng: random.Random) -> float:
    """Due again within the interval, counting the dispatcher's own period: jitter only makes it sooner."""
    usable = max(1.0, interval - DISPATCH_PERIOD_S)
    return now + usable * (1.0 - rng.uniform(0.0, conf.jitter_share()))


def desired_members(
    offering_ids: list[int], policies: dict[int, ProbePolicy], *, embedding_ids: frozenset[int] = frozenset()
) -> dict[str, int]:
    """Member -> interval for every probe that should exist (an embedding offering has only the kinds of
    its embedding probe: performance and price)."""
    wanted: dict[str, int] = {}
    for offering_id in offering_ids:
        policy = policies.get(offering_id)
        if policy is not None and not policy.enabled:
            continue
        regions = (policy.regions if policy and policy.regions else None) or conf.regions()
        kinds = kinds_for(embedding_offering=offering_id in embedding_ids)
        for region in regions:
            for kind in kinds:
                wanted[member(region, kind, offering_id)] = _interval(kind, policy)
    return wanted


def first_due(raw: str, interval: int, now: float, rng: random.Random) -> float:
    """Integrity probes of a new offering are due at once (routing must not prefer a dishonest offering
    for an hour); the others start at a random point of their first interval, spreading the load."""
    if parse_member(raw).kind in INTEGRITY_KINDS:
        return now
    return now + rng.uniform(0, interval - DISPATCH_PERIOD_S)


def schedule_sync(*, client: redis.Redis, wanted: dict[str, int], now: float, rng: random.Random) -> tuple[int, int]:
    """Add new members spread over their first interval; drop members no longer wanted. Returns (added, removed)."""
    existing = {_text(raw) for raw in client.zrange(DUE_KEY, 0, -1)}
    new = [m for m in wanted if m not in existing]
    gone = [m for m in existing if m not in wanted]
    pipe = client.pipeline(transaction=False)
    if new:
        pipe.zadd(DUE_KEY, {m: first_due(m, wanted[m], now, rng) for m in new}, nx=True)
    if gone:
        pipe.zrem(DUE_KEY, *gone)
    pipe.execute()
    return len(new), len(gone)


def schedule_claim(*, client: redis.Redis, wanted: dict[str, int], now: float, rng: random.Random) -> list[Due]:
    """Claim due probes and move each to its next due time (the lock makes claim-and-move one step)."""
    raw = client.zrangebyscore(DUE_KEY, "-inf", now, start=0, num=CLAIM_LIMIT)
    claimed = [text for m in raw if (text := _text(m)) in wanted]
    if claimed:
        client.zadd(DUE_KEY, {m: next_due(now, wanted[m], rng) for m in claimed}, xx=True)
    return [parse_member(m) for m in claimed]
