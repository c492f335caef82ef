"""Leaderboard rows: every catalog offering with its statistics from ``evaluation.selectors``.

Offerings without statistics yet are listed too (their numbers show as "—"), so a fresh
install shows what will be measured. Every measured figure carries its own sample count and
95% interval; below ``MIN_N`` samples the figure is withheld ("needs more data").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from django.utils import timezone

from catalog.selectors import Offering, OfferingPrice, current_price, offerings_listed
from evaluation.selectors import leaderboard_rows, offering_series, open_incidents, recent_incidents

WINDOWS = ("1h", "24h", "7d")
WINDOW_SPAN = {"1h": dt.timedelta(hours=1), "24h": dt.timedelta(hours=24), "7d": dt.timedelta(days=7)}
ALL_REGIONS = "all"
# Effective price blends input and output like a typical chat turn: 3 input tokens per output token.
INPUT_SHARE = 0.75

# Column key -> evaluation metric name. Columns are what the table shows; metrics what the API names.
COLUMNS = {
    "ttft_p50": "ttft_p50",
    "ttft_p90": "ttft_p90",
    "tps": "tps",
    "availability": "availability",
    "error_rate": "error_rate",
    "cache_hit": "cache_hit_ratio",
}
# Fewer samples than this and the figure is not shown: a p90 from 4 probes or an interval from 2 says nothing.
MIN_N = {"ttft_p50": 10, "ttft_p90": 20, "tps": 10, "availability": 20, "error_rate": 20, "cache_hit": 5}
# Trend metrics: the evaluation metric per trend tab.
TREND_METRICS = {"ttft": "ttft_p50", "tps": "tps", "availability": "availability", "price": "effective_input_price"}


@dataclass(frozen=True)
class Figure:
    """One measured figure: point estimate, 95% interval, its own sample count; ``thin`` below MIN_N."""

    value: float | None
    lo: float | None
    hi: float | None
    n: int
    thin: bool


NO_FIGURE = Figure(None, None, None, 0, False)


@dataclass(frozen=True)
class Row:
    offering_id: int
    model: str
    model_name: str
    provider: str
    provider_name: str
    region: str
    ttft_p50: float | None = None  # ms (None when missing or below MIN_N)
    ttft_p90: float | None = None
    tps: float | None = None  # output tokens per second
    availability: float | None = None  # 0..1
    error_rate: float | None = None  # 0..1
    cache_hit: float | None = None  # 0..1
    price_input: int | None = None  # micro-USD per 1M tokens
    price_output: int | None = None
    price_cache_read: int | None = None
    price_effective: int | None = None  # micro-USD per 1M tokens, blended, with cache hits
    n: int = 0  # probes behind the row (all kinds)
    figures: dict[str, Figure] = field(default_factory=dict)  # column key -> Figure
    breaks_cache: bool = False  # the Claude Code billing block breaks this offering's prompt cache
    anomalies: tuple[str, ...] = field(default_factory=tuple)  # "price", "quality", "capability"
    incidents: tuple[str, ...] = field(default_factory=tuple)  # metrics with an open incident

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["anomalies"] = list(self.anomalies)
        data["incidents"] = list(self.incidents)
        return data


def effective_price(
    price_in: int | None, price_out: int | None, cache_read: int | None, hit: float | None
) -> int | None:
    if price_in is None or price_out is None:
        return None
    ratio = hit or 0.0
    blended_in = price_in * (1 - ratio) + (cache_read if cache_read else price_in) * ratio
    return round(blended_in * INPUT_SHARE + price_out * (1 - INPUT_SHARE))


ANOMALY_FLAGS = {
    "price_mismatch": "price",
    "token_overcount": "price",
    "degraded_quality": "quality",
    "capability_mismatch": "capability",
}
TREND_OFFERINGS = 8  # lines on the trend chart: more is unreadable and each costs a query


def figure(stats: Mapping[str, Any], column: str) -> Figure:
    """The column's figure from a leaderboard_rows item: ``<metric>``, ``<metric>_ci``, ``<metric>_n``
    (the row's ``n`` when the metric has no count of its own)."""
    name = COLUMNS[column]
    value = stats.get(name)
    if value is None:
        return NO_FIGURE
    n = int(stats.get(f"{name}_n") or stats.get("n") or 0)
    ci = stats.get(f"{name}_ci") or (None, None)
    if n < MIN_N[column]:
        return Figure(None, None, None, n, True)
    return Figure(float(value), ci[0], ci[1], n, False)


def _stats(window: str, region: str) -> dict[tuple[int, str], Mapping[str, Any]]:
    """evaluation.selectors.leaderboard_rows keyed by (offering id, region)."""
    return {(item["offering_id"], item["region"]): item for item in leaderboard_rows(window=window, region=region)}


def _breaks_cache(offering: Offering, flags: set[str]) -> bool:
    if "billing_block_breaks_cache" in flags:
        return True
    keeps = offering.keeps_billing_block
    return bool(offering.provider.keeps_billing_block if keeps is None else keeps)


def _incidents(region: str) -> dict[int, tuple[str, ...]]:
    """Open incidents per offering: the metrics affected (for the region, or any region for "all")."""
    found: dict[int, set[str]] = {}
    for item in open_incidents():
        if region in (ALL_REGIONS, item["region"]):
            found.setdefault(item["offering_id"], set()).add(item["metric"])
    return {key: tuple(sorted(metrics)) for key, metrics in found.items()}


def _row(
    offering: Offering,
    price: OfferingPrice | None,
    region: str,
    stats: Mapping[str, Any],
    incidents: tuple[str, ...] = (),
) -> Row:
    flags = set(stats.get("flags") or [])
    figures = {column: figure(stats, column) for column in COLUMNS}
    hit = figures["cache_hit"].value
    price_in, price_out = (price.input, price.output) if price else (None, None)
    cache_read = price.cache_read if price else None
    return Row(
        offering_id=offering.pk,
        model=offering.model.slug,
        model_name=offering.model.name,
        provider=offering.provider.slug,
        provider_name=offering.provider.name,
        region=region,
        ttft_p50=figures["ttft_p50"].value,
        ttft_p90=figures["ttft_p90"].value,
        tps=figures["tps"].value,
        availability=figures["availability"].value,
        error_rate=figures["error_rate"].value,
        cache_hit=hit,
        price_input=price_in,
        price_output=price_out,
        price_cache_read=cache_read,
        price_effective=effective_price(price_in, price_out, cache_read, hit),
        n=int(stats.get("n") or 0),
        figures=figures,
        breaks_cache=_breaks_cache(offering, flags),
        anomalies=tuple(sorted({ANOMALY_FLAGS[f] for f in flags if f in ANOMALY_FLAGS})),
        incidents=incidents,
    )


def leaderboard(*, window: str = "24h", region: str = ALL_REGIONS) -> list[Row]:
    """Every offering of the catalog (measured or not) with its statistics for the window and region."""
    window = window if window in WINDOWS else "24h"
    region = region or ALL_REGIONS
    stats = _stats(window, region)
    incidents = _incidents(region)
    rows = [
        _row(
            offering,
            current_price(offering),
            region,
            stats.get((offering.pk, region), {}),
            incidents.get(offering.pk, ()),
        )
        for offering in offerings_listed()
    ]
    return sorted(rows, key=lambda row: (row.model, row.provider))


def by_region(*, window: str, regions: list[str], offering_ids: set[int]) -> list[dict[str, Any]]:
    """Side-by-side regions for the given offerings: [{"row": Row (all regions), "regions": [Row per region]}]."""
    per_region = {region: {r.offering_id: r for r in leaderboard(window=window, region=region)} for region in regions}
    combined = [r for r in leaderboard(window=window) if r.offering_id in offering_ids]
    return [
        {"row": row, "regions": [per_region[region].get(row.offering_id) for region in regions]} for row in combined
    ]


def matches(row: Row, *, q: str = "", model: str = "", provider: str = "", region: str = "") -> bool:
    if model and row.model != model:
        return False
    if provider and row.provider != provider:
        return False
    if region and region != ALL_REGIONS and row.region != region:
        return False
    haystack = f"{row.model} {row.model_name} {row.provider} {row.provider_name} {row.region}".lower()
    return all(word in haystack for word in q.lower().split())


def trend(*, rows: list[Row], window: str, region: str = ALL_REGIONS, metric: str = "ttft") -> dict[str, Any]:
    """One metric over time for the most-sampled offerings, one line each.

    ``{"metric", "window", "labels": [iso...], "series": [{label, offering_id, provider, values, lo, hi}],
    "incidents": [{offering_id, label, metric, region, opened_at, index}]}``; buckets without data are None.
    """
    name = TREND_METRICS.get(metric, "ttft_p50")
    measured = sorted((r for r in rows if r.n), key=lambda r: (-r.n, r.offering_id))[:TREND_OFFERINGS]
    empty: dict[str, Any] = {"metric": metric, "window": window, "labels": [], "series": [], "incidents": []}
    if not measured:
        return empty
    points = {
        row.offering_id: {
            p["t"]: p for p in offering_series(offering_id=row.offering_id, metric=name, window=window, region=region)
        }
        for row in measured
    }
    times = sorted({t for by_time in points.values() for t in by_time})
    if not times:
        return empty
    series = [
        {
            "label": f"{row.model_name} · {row.provider_name}",
            "offering_id": row.offering_id,
            "provider": row.provider,
            "values": [_pick(points[row.offering_id].get(t), "value") for t in times],
            "lo": [_pick(points[row.offering_id].get(t), "lo") for t in times],
            "hi": [_pick(points[row.offering_id].get(t), "hi") for t in times],
        }
        for row in measured
        if points[row.offering_id]
    ]
    return {**empty, "labels": times, "series": series, "incidents": incident_markers(measured, window, region, times)}


def _pick(point: Mapping[str, Any] | None, key: str) -> float | None:
    return None if point is None else point.get(key)


def incident_markers(rows: list[Row], window: str, region: str, times: list[str]) -> list[dict[str, Any]]:
    """Incidents opened in the window on the plotted offerings, placed on the nearest bucket label."""
    since = timezone.now() - WINDOW_SPAN[window]
    labels = {r.offering_id: f"{r.model_name} · {r.provider_name}" for r in rows}
    parsed = [dt.datetime.fromisoformat(t) for t in times]
    markers = []
    for item in recent_incidents(since=since):
        if item["offering_id"] not in labels or region not in (ALL_REGIONS, item["region"]):
            continue
        opened = item["opened_at"]
        index = min(range(len(parsed)), key=lambda i: abs((parsed[i] - opened).total_seconds()))
        markers.append(
            {
                "offering_id": item["offering_id"],
                "label": labels[item["offering_id"]],
                "metric": item["metric"],
                "region": item["region"],
                "direction": item.get("direction", ""),
                "opened_at": opened.isoformat(),
                "closed_at": item["closed_at"].isoformat() if item.get("closed_at") else None,
                "index": index,
            }
        )
    return markers
