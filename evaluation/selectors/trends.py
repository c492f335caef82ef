"""A metric over time per offering, summed from the rollups per trend bucket (so a trend's points
add up to the window's n)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.utils import timezone

from evaluation.models import ALL_REGIONS, ProbeRollup, Resolution
from evaluation.offerings_to_probe import current_catalog
from evaluation.rules.definitions import METRIC_BY_NAME
from evaluation.rules.from_counts import evaluate_counts
from evaluation.services.aggregate import cover, window_end, window_start

# Trend buckets per window (one point per bucket with samples), and the coarsest rollup that fits in one.
SERIES_BUCKET = {
    "15m": dt.timedelta(minutes=1),
    "1h": dt.timedelta(minutes=5),
    "24h": dt.timedelta(hours=1),
    "7d": dt.timedelta(hours=6),
}
_SERIES_COARSEST = {"15m": Resolution.MINUTE, "1h": Resolution.MINUTE, "24h": Resolution.HOUR, "7d": Resolution.HOUR}


@dataclass(frozen=True, slots=True)
class TrendPoint:
    t: str  # the bucket's start, ISO 8601
    value: float
    lo: float
    hi: float
    n: int

    def as_json(self) -> dict[str, object]:
        return {"t": self.t, "value": self.value, "lo": self.lo, "hi": self.hi, "n": self.n}


def _trend_counts(
    *, offering_ids: list[int], kind: str, window: str, region: str, now: dt.datetime
) -> dict[tuple[int, dt.datetime], dict[str, float]]:
    end = window_end(now)
    start = window_start(window, end)
    pieces = cover(start, end, coarsest=_SERIES_COARSEST[window])
    where = " OR ".join("(r.resolution = %s AND r.bucket >= %s AND r.bucket < %s)" for _ in pieces)
    params: list[Any] = [SERIES_BUCKET[window], start]
    for piece in pieces:
        params += list(piece)
    params += [kind, offering_ids]
    region_clause = ""
    if region != ALL_REGIONS:
        region_clause = " AND r.region = %s"
        params.append(region)
    sql = f"""
        SELECT r.offering_id, date_bin(%s, r.bucket, %s) AS t, e.key, sum(e.value::float8)
        FROM {ProbeRollup._meta.db_table} r CROSS JOIN LATERAL jsonb_each_text(r.counts) e
        WHERE ({where}) AND r.kind = %s AND r.offering_id = ANY(%s){region_clause}
        GROUP BY 1, 2, 3
    """  # noqa: S608 - placeholders and the table name only
    out: dict[tuple[int, dt.datetime], dict[str, float]] = defaultdict(dict)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for oid, t, key, total in cursor.fetchall():
            out[(int(oid), t)][str(key)] = float(total)
    return out


def offering_trends(
    *,
    metric: str,
    window: str = "24h",
    region: str = ALL_REGIONS,
    offering_ids: Iterable[int],
    now: dt.datetime | None = None,
) -> dict[int, list[TrendPoint]]:
    """Per offering, the metric per trend bucket from the rollups of the metric's probe kind, oldest
    first; buckets without the metric are left out, so each ``t`` appears once and increases."""
    ids = sorted(set(offering_ids))
    kind = METRIC_BY_NAME[metric].kind
    counts = _trend_counts(offering_ids=ids, kind=kind, window=window, region=region, now=now or timezone.now())
    prices = {o.offering_id: o.prices for o in current_catalog().offerings}
    series: dict[int, list[TrendPoint]] = {oid: [] for oid in ids}
    for (oid, t), kind_counts in sorted(counts.items()):
        item = evaluate_counts({kind: kind_counts}, prices.get(oid)).metrics.get(metric)
        if item:
            series[oid].append(TrendPoint(t.isoformat(), item["value"], item["lo"], item["hi"], item["n"]))
    return series


def offering_series(
    *, offering_id: int, metric: str, window: str = "24h", region: str = ALL_REGIONS, now: dt.datetime | None = None
) -> list[TrendPoint]:
    """One offering's trend (buckets without data omitted)."""
    return offering_trends(metric=metric, window=window, region=region, offering_ids=[offering_id], now=now)[
        offering_id
    ]
