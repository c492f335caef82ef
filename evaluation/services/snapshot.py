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

import redis

from contracts import redis_keys
from contracts.snapshot import OfferingStats, StatsSnapshot
from evaluation.models import Aggregate

SNAPSHOT_WINDOW = "1h"  # the gateway routes on the freshest window
MAX_ATTEMPTS = 200  # optimistic retries under contention (a refresh lock keeps it to one publisher normally)
BACKOFF_S = 0.002  # up to this long (random) between retries, so contenders spread out


def _value(metrics: dict[str, dict[str, float]], name: str) -> float | None:
    item = metrics.get(name)
    return None if item is None else float(item["value"])


def offering_stats(agg: Aggregate) -> OfferingStats:
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
    )


def build_snapshot(window: str = SNAPSHOT_WINDOW) -> StatsSnapshot:
    stats: dict[str, dict[str, OfferingStats]] = {}
    for agg in Aggregate.objects.filter(window=window).order_by("region", "offering_id"):
        stats.setdefault(agg.region, {})[str(agg.offering_id)] = offering_stats(agg)
    return StatsSnapshot(version=0, generated_at=time.time(), window=window, stats=stats)


def snapshot_publish(*, client: redis.Redis, snapshot: StatsSnapshot) -> int:
    """Store ``snapshot`` under the next version; returns that version."""
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


def current_version(client: redis.Redis) -> int:
    return int(client.get(redis_keys.STATS_VERSION) or 0)
