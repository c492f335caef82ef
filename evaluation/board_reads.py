"""Reads for the public leaderboard beyond the aggregate rows: latency and speed distributions per offering,
and the vector length each embedding offering answers with.

The aggregates keep TTFT p50/p90/p99 and speed p50/p10; a buyer also wants the shape. The rollups hold
fixed log-spaced histograms (``evaluation.stats.sketch``) that add up over any window, so one grouped
query sums them per offering for the window and the quantiles come out exactly as the aggregates'
(same estimator, same intervals), with a coarse histogram for a small chart.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.utils import timezone

from evaluation.models import ALL_REGIONS, ProbeKind, ProbeResult, ProbeRollup
from evaluation.probes.outcome import EMBEDDING_VARIANT
from evaluation.services.aggregate import WINDOWS, cover, window_end, window_start
from evaluation.stats.sketch import Histogram, representative

# (name, histogram counter, quantile, minimum n). Speed's tail is the slow side: "p90" is the speed that
# nine in ten probes reach or beat (the 10th percentile), "p99" the one 99 in 100 do.
QUANTILES = {
    "ttft": (("p50", 0.5, 10), ("p90", 0.9, 30), ("p99", 0.99, 100)),
    "tps": (("p50", 0.5, 10), ("p90", 0.1, 30), ("p99", 0.01, 100)),
}
COUNTERS = {"ttft": "t1", "tps": "tps"}
# The vector length shown is the latest successful embedding probe's within this span (probes run every
# few minutes; an offering silent for a day shows none rather than an old answer).
DIMENSIONS_SPAN = dt.timedelta(hours=24)
CHART_BINS = 12  # bars in the small distribution chart: enough for a shape, few enough to read at 120 px


def _counts(ids: list[int], window: str, region: str, now: dt.datetime) -> dict[int, dict[str, dict[int, int]]]:
    end = window_end(now)
    pieces = cover(window_start(window, end), end)
    where = " OR ".join("(r.resolution = %s AND r.bucket >= %s AND r.bucket < %s)" for _ in pieces)
    params: list[Any] = [value for piece in pieces for value in piece]
    params += [ProbeKind.PERFORMANCE, ids]
    region_clause = ""
    if region != ALL_REGIONS:
        region_clause, params = " AND r.region = %s", [*params, region]
    sql = f"""
        SELECT r.offering_id, e.key, sum(e.value::float8)
        FROM {ProbeRollup._meta.db_table} r CROSS JOIN LATERAL jsonb_each_text(r.counts) e
        WHERE ({where}) AND r.kind = %s AND r.offering_id = ANY(%s){region_clause}
          AND (e.key LIKE 't1:%%' OR e.key LIKE 'tps:%%')
        GROUP BY 1, 2
    """  # noqa: S608 - placeholders and the table name only
    out: dict[int, dict[str, dict[int, int]]] = defaultdict(lambda: {"t1": {}, "tps": {}})
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for oid, key, total in cursor.fetchall():
            name, _, index = str(key).partition(":")
            out[int(oid)][name][int(index)] = int(total)
    return out


def _bins(hist: Histogram, counts: dict[int, int]) -> list[list[float]]:
    """The histogram folded into CHART_BINS log-spaced bars between its smallest and largest value:
    [[low, high, count], ...]. Bucket indexes are already log-spaced, so a bar is a range of indexes."""
    if not hist.buckets:
        return []
    first, last = hist.buckets[0], hist.buckets[-1]
    span = (last - first + 1) / CHART_BINS
    bars = [0] * CHART_BINS
    for index, count in counts.items():
        bars[min(CHART_BINS - 1, int((index - first) / span))] += count
    edges = [representative(round(first + k * span)) for k in range(CHART_BINS + 1)]  # each bar's bounds, as values
    return [[edges[i], edges[i + 1], bars[i]] for i in range(CHART_BINS)]


def _distribution(counts: dict[int, int], metric: str) -> dict[str, Any]:
    hist = Histogram(counts)
    out: dict[str, Any] = {"n": hist.n, "bins": _bins(hist, counts)}
    for name, p, min_n in QUANTILES[metric]:
        estimate = hist.quantile_ci(p) if hist.n >= min_n else None
        out[name] = estimate.as_dict() if estimate else None
    return out


def latency_distributions(
    *, offering_ids: Iterable[int], window: str = "24h", region: str = ALL_REGIONS, now: dt.datetime | None = None
) -> dict[int, dict[str, dict[str, Any]]]:
    """Per offering with performance probes in the window: {"ttft": dist, "tps": dist}, each dist
    {"n", "p50", "p90", "p99" ({"value", "lo", "hi", "n"} or None below its minimum n), "bins"}."""
    ids = sorted(set(offering_ids))
    if not ids or window not in WINDOWS:
        return {}
    found = _counts(ids, window, region, now or timezone.now())
    return {
        oid: {metric: _distribution(by_name[COUNTERS[metric]], metric) for metric in COUNTERS}
        for oid, by_name in found.items()
    }


def embedding_dimensions(*, offering_ids: Iterable[int], now: dt.datetime | None = None) -> dict[int, int]:
    """Per embedding offering with a successful probe in the last ``DIMENSIONS_SPAN``: the length of the
    vectors it answered with (the model's native dimensions: the probe never asks for fewer)."""
    ids = sorted(set(offering_ids))
    if not ids:
        return {}
    since = (now or timezone.now()) - DIMENSIONS_SPAN
    latest = (
        ProbeResult.objects.filter(
            offering_id__in=ids,
            kind=ProbeKind.PERFORMANCE,
            variant=EMBEDDING_VARIANT,
            error_class="",
            started_at__gte=since,
        )
        .order_by("offering_id", "-started_at")
        .distinct("offering_id")
        .values_list("offering_id", "details__dimensions")
    )
    return {int(oid): int(dims) for oid, dims in latest if isinstance(dims, int) and dims > 0}
