"""Publish the StatsSnapshot: document and version swapped in one MULTI, then a PUBLISH.

Race: two refreshes publishing at once. WATCH on the version key makes the
read-version / write-document step optimistic: if another publisher bumps the
version between our read and EXEC, EXEC fails and we rebuild with the new number.
So the stored document's version always equals the version key and no two
published documents share a version.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from datetime import timedelta

import redis
from django.utils import timezone

from contracts import redis_keys
from contracts.snapshot import OfferingStats, StatsSnapshot
from evaluation.models import ALL_REGIONS, Aggregate, Incident
from metering.provider_truth import OfferingTruth, provider_truth_by_offering

SNAPSHOT_WINDOW = "1h"  # the gateway routes on the hour's figures ...
RECENT_WINDOW = "15m"  # ... with the freshest quarter beside them, which it weighs over the older samples
# Billing evidence speaks for the provider now: its per-request reported cost of the last hour (fresh, and a
# bounded read every refresh), its invoices of the last two days (a day's invoice arrives the day after).
REPORTED_COST_WINDOW = timedelta(hours=1)
INVOICE_WINDOW = timedelta(days=2)
# Weight of billing evidence in the router's price estimate, in probe-equivalents: real money, not a sample.
BILLING_TRUTH_N = 50
MAX_ATTEMPTS = 200  # optimistic retries under contention (a refresh lock keeps it to one publisher normally)
BACKOFF_S = 0.002  # up to this long (random) between retries, so contenders spread out


def _value(metrics: dict[str, dict[str, float]], name: str, part: str = "value") -> float | None:
    item = metrics.get(name)
    return None if item is None else float(item[part])


def _n(metrics: dict[str, dict[str, float]], name: str) -> int:
    item = metrics.get(name)
    return 0 if item is None else int(item["n"])


def offering_stats(agg: Aggregate, incidents: tuple[str, ...] = ()) -> OfferingStats:
    m = agg.metrics
    price = _value(m, "effective_input_price")
    return OfferingStats(
        offering_id=agg.offering_id,
        n=agg.n,
        ttft_p50_ms=_value(m, "ttft_p50"),
        ttft_p90_ms=_value(m, "ttft_p90"),
        tps_p50=_value(m, "tps"),
        availability=_value(m, "availability"),
        error_rate=_value(m, "error_rate"),
        cache_hit_ratio=_value(m, "cache_hit_ratio"),
        effective_input_price=None if price is None else round(price),
        quality_score=_value(m, "quality_score"),
        flags=tuple(agg.flags),
        ttft_p50_hi_ms=_value(m, "ttft_p50", "hi"),
        ttft_10k_p50_ms=_value(m, "ttft_10k_p50"),
        tps_p10=_value(m, "tps_p10"),
        availability_lo=_value(m, "availability", "lo"),
        error_rate_hi=_value(m, "error_rate", "hi"),
        cache_hit_lo=_value(m, "cache_hit_ratio", "lo"),
        cache_n=_n(m, "cache_hit_ratio"),
        price_n=_n(m, "token_overcount_share"),
        overcount_factor=_value(m, "overcount_factor", "hi"),  # the interval's pessimistic end
        billed_ratio=_value(m, "billed_ratio", "hi"),
        quality_n=_n(m, "quality_score"),
        quality_lo=_value(m, "quality_score", "lo"),
        incidents=incidents,
        answer_ttft_p50_ms=_value(m, "answer_ttft_p50"),
    )


def _with_recent(stats: OfferingStats, recent: Aggregate | None) -> OfferingStats:
    if recent is None:
        return stats
    m = recent.metrics
    return replace(
        stats,
        recent_n=recent.n,
        recent_ttft_p50_ms=_value(m, "ttft_p50"),
        recent_tps_p50=_value(m, "tps"),
        recent_error_rate=_value(m, "error_rate"),
    )


def open_incidents() -> dict[tuple[int, str], tuple[str, ...]]:
    """(offering, region) -> metrics with an open incident for the worse (routing demotes them)."""
    found: dict[tuple[int, str], list[str]] = {}
    rows = Incident.objects.filter(closed_at__isnull=True, direction="worse")
    for oid, region, metric in rows.values_list("offering_id", "region", "metric"):
        found.setdefault((oid, region), []).append(metric)
    return {key: tuple(sorted(set(metrics))) for key, metrics in found.items()}


def _with_billing_truth(stats: OfferingStats, truth: OfferingTruth) -> OfferingStats:
    """Over-billing and over-reporting seen by metering join the probes' integrity flags and ratios."""

    def worst(ours: float | None, theirs: float | None) -> float | None:
        return theirs if ours is None else ours if theirs is None else max(ours, theirs)

    return replace(
        stats,
        flags=tuple(sorted({*stats.flags, *truth.flags})),
        billed_ratio=worst(stats.billed_ratio, truth.billed_ratio),
        overcount_factor=worst(stats.overcount_factor, truth.overcount_factor),
        price_n=max(stats.price_n, BILLING_TRUTH_N),
    )


def build_snapshot(window: str = SNAPSHOT_WINDOW) -> StatsSnapshot:
    stats: dict[str, dict[str, OfferingStats]] = {}
    incidents = open_incidents()
    recent = {(a.offering_id, a.region): a for a in Aggregate.objects.filter(window=RECENT_WINDOW)}
    for agg in Aggregate.objects.filter(window=window).order_by("region", "offering_id"):
        found = incidents.get((agg.offering_id, agg.region), ())
        item = _with_recent(offering_stats(agg, found), recent.get((agg.offering_id, agg.region)))
        stats.setdefault(agg.region, {})[str(agg.offering_id)] = item
    overall = stats.setdefault(ALL_REGIONS, {})  # price truth is not regional: it goes with all regions
    now = timezone.now()
    truths = provider_truth_by_offering(since=now - REPORTED_COST_WINDOW, invoices_since=(now - INVOICE_WINDOW).date())
    for oid, truth in truths.items():
        overall[str(oid)] = _with_billing_truth(overall.get(str(oid)) or OfferingStats(offering_id=oid, n=0), truth)
    return StatsSnapshot(version=0, generated_at=time.time(), window=window, stats=stats)


# KEYS: snapshot. ARGV: document, its version. Replaces only a document of a lower version.
_SET_IF_NEWER = """
local current = redis.call('GET', KEYS[1])
if current and tonumber(cjson.decode(current)['version']) >= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""


def snapshot_publish(*, client: redis.Redis, snapshot: StatsSnapshot) -> int:
    """Store ``snapshot`` under the next version; returns that version."""
    if isinstance(client, redis.RedisCluster):
        return _publish_on_cluster(client, snapshot)
    for _ in range(MAX_ATTEMPTS):
        with client.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(redis_keys.STATS_VERSION)
                version = int(pipe.get(redis_keys.STATS_VERSION) or 0) + 1
                document = replace(snapshot, version=version).to_json()
                pipe.multi()
                pipe.set(redis_keys.STATS_SNAPSHOT, document)
                pipe.incr(redis_keys.STATS_VERSION)
                pipe.publish(redis_keys.SNAPSHOT_CHANNEL, "stats")
                pipe.execute()
            except redis.WatchError:
                time.sleep(random.uniform(0, BACKOFF_S))
                continue
            return version
    raise RuntimeError(f"could not publish the stats snapshot in {MAX_ATTEMPTS} attempts")


def _publish_on_cluster(client: redis.RedisCluster, snapshot: StatsSnapshot) -> int:
    """The version key and the document are in different slots (no MULTI): INCR takes a version no
    other publisher gets, and the document is stored only over an older one. A gateway polling between
    the two reads the previous document, and the next refresh's version brings it the new one."""
    version = int(client.incr(redis_keys.STATS_VERSION))
    client.eval(_SET_IF_NEWER, 1, redis_keys.STATS_SNAPSHOT, replace(snapshot, version=version).to_json(), version)
    client.publish(redis_keys.SNAPSHOT_CHANNEL, "stats")
    return version


def current_version(client: redis.Redis) -> int:
    return int(client.get(redis_keys.STATS_VERSION) or 0)
