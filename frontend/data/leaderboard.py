"""Leaderboard rows: every catalog offering with its statistics from ``evaluation.selectors``.

Offerings without statistics yet are listed too (their numbers show as "—"), so a fresh
install shows what will be measured. Every measured figure carries its own sample count and
95% interval; below ``MIN_N`` samples the figure is withheld ("needs more data").

Two kinds of offering, each its own view of the board: chat models (``chat``) and embedding models
(``embeddings``: the offering declares the ``embeddings`` parameter; measured by the embedding probe,
so they have a time to the whole answer and the vectors' dimensions instead of TTFT and speed).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from django.utils import timezone

from catalog.selectors import Offering, OfferingPrice, current_price, offerings_listed
from evaluation.board_reads import embedding_dimensions, latency_distributions
from evaluation.selectors import MIN_N as METRIC_MIN_N
from evaluation.selectors import (
    LeaderboardRow,
    MetricFigure,
    RegionFigures,
    TrendPoint,
    incidents_list,
    leaderboard_rows,
    offering_trends,
)
from frontend.data.offering_facts import cache_write_price, parameters, quantisation
from frontend.templatetags.tw import region_name
from metering.selectors import tokens_served_by_offering

WINDOWS = ("15m", "1h", "24h", "7d")
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
    "ttft_p99": "ttft_p99",
    "tps_p10": "tps_p10",
    "quality": "quality_score",
    "latency_p50": "embedding_latency_p50",
    "latency_p90": "embedding_latency_p90",
}
CHAT, EMBEDDINGS = "chat", "embeddings"  # the board's views; an embedding offering declares EMBEDDINGS
KINDS = (CHAT, EMBEDDINGS)
# Fewer samples than this and evaluation withholds the figure ("needs_more_data"): a p90 from 4 probes
# or an interval from 2 says nothing.
MIN_N = {column: METRIC_MIN_N[metric] for column, metric in COLUMNS.items()}
# Trend metrics: the evaluation metric per trend tab.
TREND_METRICS = {
    "ttft": "ttft_p50",
    "tps": "tps",
    "availability": "availability",
    "price": "effective_input_price",
    "latency": "embedding_latency_p50",
}


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
    ttft_p99: float | None = None
    quality: float | None = None  # 0..1, share of quality canaries answered right
    price_input: int | None = None  # micro-USD per 1M tokens
    price_output: int | None = None
    price_cache_read: int | None = None
    price_cache_write: int | None = None
    price_effective: int | None = None  # micro-USD per 1M tokens, blended, with cache hits
    n: int = 0  # probes behind the row (all kinds)
    figures: dict[str, Figure] = field(default_factory=dict)  # column key -> Figure
    breaks_cache: bool = False  # the Claude Code billing block breaks this offering's prompt cache
    anomalies: tuple[str, ...] = field(default_factory=tuple)  # "price", "quality", "capability"
    incidents: tuple[str, ...] = field(default_factory=tuple)  # metrics with an open incident
    context_window: int = 0  # tokens, as the catalog declares
    max_output: int = 0
    parameters: tuple[str, ...] = field(default_factory=tuple)
    quantisation: str = ""  # "" when the provider does not say
    tokens_24h: int = 0  # tokens served through Tokenway (usage records)
    tokens_7d: int = 0
    dist: dict[str, Any] = field(default_factory=dict)  # "ttft" / "tps": distribution (evaluation.board_reads)
    kind: str = CHAT  # CHAT or EMBEDDINGS (KINDS)
    latency_p50: float | None = None  # ms to the whole answer of an embedding request
    latency_p90: float | None = None
    dimensions: int | None = None  # the vectors' length an embedding offering answered with (None: not yet)

    def as_json(self) -> dict[str, Any]:
        """The row for scripts and data.json: flat fields and each figure, without the distributions' bins
        (drawn on the server; half the page's weight if embedded)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("figures", "dist")}
        data["figures"] = {key: asdict(figure) for key, figure in self.figures.items()}
        data["anomalies"] = list(self.anomalies)
        data["incidents"] = list(self.incidents)
        data["parameters"] = list(self.parameters)
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


def figure(figures: Mapping[str, MetricFigure], column: str) -> Figure:
    """The column's figure from a leaderboard row's figures (status ok | needs_more_data | no_data)."""
    found = figures.get(COLUMNS[column])
    if found is None:
        return NO_FIGURE
    if found.status == "needs_more_data":
        return Figure(None, None, None, found.n, True)
    if found.status != "ok" or found.value is None:
        return NO_FIGURE
    lo, hi = found.ci or (None, None)
    return Figure(float(found.value), lo, hi, found.n, False)


Stats = dict[tuple[int, str], LeaderboardRow]


def stats_read(window: str, region: str) -> Stats:
    """One read of the window's aggregates (the page's heaviest): pass it to ``leaderboard`` and ``by_region``."""
    return _stats(window if window in WINDOWS else "24h", region or ALL_REGIONS)


def _stats(window: str, region: str) -> Stats:
    """evaluation's leaderboard rows keyed by (offering id, region)."""
    return {(item.offering_id, item.region): item for item in leaderboard_rows(window=window, region=region)}


def _breaks_cache(offering: Offering, flags: set[str]) -> bool:
    if "billing_block_breaks_cache" in flags:
        return True
    keeps = offering.keeps_billing_block
    return bool(offering.provider.keeps_billing_block if keeps is None else keeps)


def _row(
    offering: Offering,
    price: OfferingPrice | None,
    region: str,
    stats: LeaderboardRow | RegionFigures | None,
) -> Row:
    """A table row; ``stats`` None for an offering not measured yet, RegionFigures for one region beside "all"."""
    measured = stats if isinstance(stats, LeaderboardRow) else None
    incidents = tuple(sorted({item.metric for item in measured.incidents})) if measured else ()
    flags = set(measured.flags) if measured else set()
    figures = {column: figure(stats.figures if stats else {}, column) for column in COLUMNS}
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
        ttft_p99=figures["ttft_p99"].value,
        quality=figures["quality"].value,
        price_input=price_in,
        price_output=price_out,
        price_cache_read=cache_read,
        price_cache_write=cache_write_price(price),
        price_effective=effective_price(price_in, price_out, cache_read, hit),
        n=stats.n if stats else 0,
        figures=figures,
        breaks_cache=_breaks_cache(offering, flags),
        anomalies=tuple(sorted({ANOMALY_FLAGS[f] for f in flags if f in ANOMALY_FLAGS})),
        incidents=incidents,
        context_window=offering.context_window,
        max_output=offering.max_output,
        parameters=parameters(offering),
        quantisation=quantisation(offering.upstream_model),
        kind=offering_kind(offering),
        latency_p50=figures["latency_p50"].value,
        latency_p90=figures["latency_p90"].value,
    )


def offering_kind(offering: Offering) -> str:
    return EMBEDDINGS if EMBEDDINGS in parameters(offering) else CHAT


def offering_kind_of(offering_id: int) -> str | None:
    """The board view an offering of the catalog belongs to; None for an offering not listed."""
    offering = offerings_listed().filter(pk=offering_id).first()
    return None if offering is None else offering_kind(offering)


def leaderboard(*, window: str = "24h", region: str = ALL_REGIONS, stats: Stats | None = None) -> list[Row]:
    """Every offering of the catalog (measured or not) with its statistics for the window and region."""
    window = window if window in WINDOWS else "24h"
    region = region or ALL_REGIONS
    stats = _stats(window, region) if stats is None else stats
    rows = [
        _row(offering, current_price(offering), region, stats.get((offering.pk, region)))
        for offering in offerings_listed()
    ]
    return sorted(rows, key=lambda row: (row.model, row.provider))


def enrich(rows: list[Row], *, window: str, region: str = ALL_REGIONS) -> list[Row]:
    """The rows with what more reads add: tokens served (24 h, 7 d), the TTFT and speed distributions of
    the window (only for chat offerings with probes) and embedding offerings' measured dimensions."""
    served = tokens_served_by_offering(now=timezone.now())
    chat = [r.offering_id for r in rows if r.n and r.kind == CHAT]
    dists = latency_distributions(offering_ids=chat, window=window, region=region)
    dimensions = embedding_dimensions(offering_ids=[r.offering_id for r in rows if r.kind == EMBEDDINGS])
    return [
        replace(
            row,
            tokens_24h=served.get(row.offering_id, {}).get("24h", 0),
            tokens_7d=served.get(row.offering_id, {}).get("7d", 0),
            dist=dists.get(row.offering_id, {}),
            dimensions=dimensions.get(row.offering_id),
        )
        for row in rows
    ]


def by_region(
    *, window: str, regions: list[str], offering_ids: set[int], stats: Stats | None = None
) -> list[dict[str, Any]]:
    """Side-by-side regions for the given offerings, from the ``by_region`` figures of the "all" rows:
    [{"row": Row (all regions), "regions": [(region, Row or None)]}]."""
    window = window if window in WINDOWS else "24h"
    stats = _stats(window, ALL_REGIONS) if stats is None else stats
    out = []
    for offering in offerings_listed():
        if offering.pk not in offering_ids:
            continue
        price = current_price(offering)
        item = stats.get((offering.pk, ALL_REGIONS))
        regional = (item.by_region if item else None) or {}
        out.append(
            {
                "row": _row(offering, price, ALL_REGIONS, item),
                "regions": [(r, _row(offering, price, r, regional[r]) if r in regional else None) for r in regions],
            }
        )
    return sorted(out, key=lambda entry: (entry["row"].model, entry["row"].provider))


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
    "incidents": [{offering_id, label, metric, region, region_name, opened_at, index}]}``; buckets without data are None.
    """
    name = TREND_METRICS.get(metric, "ttft_p50")
    # Offerings with an open incident first: an incident is what a reader of the trend most needs to see.
    measured = sorted((r for r in rows if r.n), key=lambda r: (not r.incidents, -r.n, r.offering_id))[:TREND_OFFERINGS]
    empty: dict[str, Any] = {"metric": metric, "window": window, "labels": [], "series": [], "incidents": []}
    if not measured:
        return empty
    found = offering_trends(metric=name, window=window, region=region, offering_ids=[r.offering_id for r in measured])
    points = {oid: {p.t: p for p in series} for oid, series in found.items()}
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
        if points.get(row.offering_id)
    ]
    return {**empty, "labels": times, "series": series, "incidents": incident_markers(measured, region, times)}


def _pick(point: TrendPoint | None, key: str) -> float | None:
    return None if point is None else float(getattr(point, key))


def incident_markers(rows: list[Row], region: str, times: list[str]) -> list[dict[str, Any]]:
    """Incidents of the plotted offerings that overlap the plotted span: ``index`` the bucket nearest its opening
    (the first bucket when it opened earlier), ``end_index`` the one nearest its closing (None while open)."""
    labels = {r.offering_id: f"{r.model_name} · {r.provider_name}" for r in rows}
    parsed = [dt.datetime.fromisoformat(t) for t in times]
    slack = parsed[1] - parsed[0] if len(parsed) > 1 else dt.timedelta(hours=1)
    first, last = parsed[0] - slack, parsed[-1] + slack
    markers = []
    for item in incidents_list(state="all", offering_ids=list(labels), region=region):
        opened = dt.datetime.fromisoformat(item.opened_at)
        closed = dt.datetime.fromisoformat(item.closed_at) if item.closed_at else None
        if opened > last or (closed is not None and closed < first):
            continue
        index = _nearest(parsed, max(opened, parsed[0]))
        end_index = None if closed is None else _nearest(parsed, min(closed, parsed[-1]))
        markers.append(
            {
                "offering_id": item.offering_id,
                "label": labels[item.offering_id],
                "metric": item.metric,
                "region": item.region,
                "region_name": region_name(item.region),
                "direction": item.direction,
                "opened_at": item.opened_at,
                "closed_at": item.closed_at,
                "index": index,
                "end_index": end_index,
            }
        )
    return markers


def _nearest(times: list[dt.datetime], at: dt.datetime) -> int:
    return min(range(len(times)), key=lambda i: abs((times[i] - at).total_seconds()))
