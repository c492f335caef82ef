"""Reads for the leaderboard API and the frontend: plain data, no HTTP.

Row shape (``leaderboard_rows``; docs/evaluation.md, "API"): offering_id, model, provider, region,
window, window_start, window_end, n, computed_at, flags, incidents, and for each metric in METRICS
``<metric>`` (point estimate, or None below its minimum sample count), ``<metric>_ci`` ([lo, hi] or
None), ``<metric>_n`` (its own sample count) and ``<metric>_status`` ("ok", "needs_more_data",
"no_data"); on region "all" also ``by_region`` ({region: the same figures}).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.db.models import Count, Sum
from django.utils import timezone

from catalog.selectors import offerings_active_count
from contracts.snapshot import OfferingSnapshot
from contracts.usage import Tokens, cost_micros
from evaluation.conf import regions
from evaluation.models import (
    ALL_REGIONS,
    Aggregate,
    Incident,
    ProbeKind,
    ProbeResult,
    ProbeRollup,
    Resolution,
    WindowState,
)
from evaluation.offerings_to_probe import current_catalog
from evaluation.rollup_metrics import compute_from_counts
from evaluation.services.aggregate import WINDOWS as WINDOWS  # re-exported: the windows readers may ask for
from evaluation.services.aggregate import cover, window_end, window_start

METRICS = (
    "ttft_p50",
    "ttft_p90",
    "ttft_p99",
    "ttft_10k_p50",
    "answer_ttft_p50",
    "answer_ttft_p90",
    "tps",
    "tps_p10",
    "availability",
    "error_rate",
    "cache_hit_ratio",
    "billing_cache_hit_ratio",
    "stripped_cache_hit_ratio",
    "effective_input_price",
    "quality_score",
    "token_overcount_share",
    "price_mismatch_share",
    "overcount_factor",
    "billed_ratio",
)
# Below this many samples a figure is withheld ("needs_more_data"). Quantile CIs come from order
# statistics: at these n the interval's ranks stay inside the sample (p90 needs n >= 30 for a finite
# upper rank ~ n*p + 1.96*sqrt(n*p*(1-p)) + 1 <= n; p99 is never reported from fewer than 100, and its
# upper bound stays the sample maximum until n ~ 500). Proportions use Wilson intervals, which are
# honest at small n, but a rate from fewer than 20 probes moves by 5 points with one probe.
MIN_N = {
    "ttft_p50": 10,
    "ttft_p90": 30,
    "ttft_p99": 100,
    "ttft_10k_p50": 10,
    "answer_ttft_p50": 10,
    "answer_ttft_p90": 30,
    "tps": 10,
    "tps_p10": 20,
    "availability": 20,
    "error_rate": 20,
    "cache_hit_ratio": 5,
    "billing_cache_hit_ratio": 5,
    "stripped_cache_hit_ratio": 5,
    "effective_input_price": 5,
    "quality_score": 20,
    "token_overcount_share": 3,
    "price_mismatch_share": 3,
    "overcount_factor": 3,
    "billed_ratio": 3,
}
SORT_KEYS = (*METRICS, "n", "model", "provider", "region")
DEFAULT_SORT = "ttft_p50"
FLAGS = ("billing_block_breaks_cache", "price_mismatch", "token_overcount", "degraded_quality", "capability_mismatch")
COVERAGE_WINDOW = dt.timedelta(hours=1)  # performance probes run every 5 min, so an hour shows gaps clearly
# Trend buckets per window (one point per bucket with samples), and the coarsest rollup that fits in one.
SERIES_BUCKET = {
    "15m": dt.timedelta(minutes=1),
    "1h": dt.timedelta(minutes=5),
    "24h": dt.timedelta(hours=1),
    "7d": dt.timedelta(hours=6),
}
_SERIES_COARSEST = {"15m": Resolution.MINUTE, "1h": Resolution.MINUTE, "24h": Resolution.HOUR, "7d": Resolution.HOUR}
# The probe kind whose rollups each metric is computed from (trends read only those rows).
METRIC_KIND = {
    **dict.fromkeys(
        ("ttft_p50", "ttft_p90", "ttft_p99", "ttft_10k_p50", "answer_ttft_p50", "answer_ttft_p90", "tps", "tps_p10"),
        ProbeKind.PERFORMANCE,
    ),
    **dict.fromkeys(("availability", "error_rate"), ProbeKind.PERFORMANCE),
    **dict.fromkeys(
        ("cache_hit_ratio", "billing_cache_hit_ratio", "stripped_cache_hit_ratio", "effective_input_price"),
        ProbeKind.CACHE,
    ),
    "quality_score": ProbeKind.QUALITY,
    **dict.fromkeys(
        ("token_overcount_share", "price_mismatch_share", "overcount_factor", "billed_ratio"), ProbeKind.PRICE
    ),
}
INCIDENT_FIELDS = (
    "id",
    "offering_id",
    "region",
    "metric",
    "direction",
    "opened_at",
    "closed_at",
    "baseline",
    "observed",
)
RECENT_INCIDENTS = dt.timedelta(days=7)


def figures(metrics: dict[str, Any]) -> dict[str, Any]:
    """``<metric>``, ``<metric>_ci``, ``<metric>_n``, ``<metric>_status`` for every metric, min-n applied."""
    out: dict[str, Any] = {}
    for name in METRICS:
        item = metrics.get(name)
        n = int(item["n"]) if item else 0
        status = "no_data" if n == 0 else "needs_more_data" if n < MIN_N[name] else "ok"
        shown = item if status == "ok" else None
        out[name] = shown["value"] if shown else None
        out[f"{name}_ci"] = [shown["lo"], shown["hi"]] if shown else None
        out[f"{name}_n"] = n
        out[f"{name}_status"] = status
    return out


def window_bounds(window: str, computed_at: dt.datetime | None = None) -> tuple[str, str] | None:
    """(start, end) of the window's aggregates: from its WindowState, else from a row's computed_at."""
    state = WindowState.objects.filter(window=window).values_list("end", flat=True).first()
    end = state or (window_end(computed_at) if computed_at else None)
    return None if end is None else (window_start(window, end).isoformat(), end.isoformat())


def _incident_dict(row: dict[str, Any]) -> dict[str, Any]:
    return {key: (value.isoformat() if isinstance(value, dt.datetime) else value) for key, value in row.items()}


def _open_by_offering(offering_ids: Iterable[int], region: str) -> dict[int, list[dict[str, Any]]]:
    qs = Incident.objects.filter(closed_at__isnull=True, offering_id__in=list(offering_ids)).order_by("-opened_at")
    if region != ALL_REGIONS:
        qs = qs.filter(region=region)
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    fields = ("id", "offering_id", "region", "metric", "direction", "opened_at", "baseline", "observed")
    for row in qs.values(*fields):
        oid = row.pop("offering_id")
        found[oid].append(_incident_dict(row))
    return found


def _row(agg: Aggregate, offering: OfferingSnapshot, bounds: tuple[str, str] | None) -> dict[str, Any]:
    start, end = bounds or window_bounds(agg.window, agg.computed_at) or (None, None)
    return {
        "offering_id": agg.offering_id,
        "model": offering.model,
        "provider": offering.provider,
        "region": agg.region,
        "window": agg.window,
        "window_start": start,
        "window_end": end,
        "n": agg.n,
        "computed_at": agg.computed_at.isoformat(),
        "flags": list(agg.flags),
        **figures(agg.metrics),
    }


def _sorted(rows: list[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    key, descending = sort.lstrip("-"), sort.startswith("-")
    present = [r for r in rows if r[key] is not None]
    missing = [r for r in rows if r[key] is None]  # rows without the metric go last either way
    present.sort(key=lambda r: (r[key], r["offering_id"]), reverse=descending)
    return present + missing


def leaderboard_rows(
    *,
    window: str = "1h",
    region: str = ALL_REGIONS,
    model: str | None = None,
    provider: str | None = None,
    sort: str = DEFAULT_SORT,
) -> list[dict[str, Any]]:
    offerings = {
        o.offering_id: o
        for o in current_catalog().offerings
        if (model is None or o.model == model) and (provider is None or o.provider == provider)
    }
    aggregates = Aggregate.objects.filter(window=window, offering_id__in=list(offerings))
    if region != ALL_REGIONS:
        aggregates = aggregates.filter(region=region)
    rows: list[dict[str, Any]] = []
    regional: dict[int, dict[str, Any]] = defaultdict(dict)
    bounds = window_bounds(window)
    for agg in aggregates.order_by("offering_id", "region"):
        if agg.region == region:
            rows.append(_row(agg, offerings[agg.offering_id], bounds))
        else:  # region "all": the per-region figures go beside the overall ones
            regional[agg.offering_id][agg.region] = {"n": agg.n, **figures(agg.metrics)}
    incidents = _open_by_offering((r["offering_id"] for r in rows), region)
    for row in rows:
        row["incidents"] = incidents.get(row["offering_id"], [])
        if region == ALL_REGIONS:
            row["by_region"] = regional.get(row["offering_id"], {})
    return _sorted(rows, sort)


def leaderboard_window(window: str) -> tuple[str | None, str | None]:
    """(window_start, window_end) of the window's latest aggregates, or (None, None) before the first refresh."""
    latest = (
        Aggregate.objects.filter(window=window).order_by("-computed_at").values_list("computed_at", flat=True).first()
    )
    return window_bounds(window, latest) or (None, None)


def _trend_counts(
    *, offering_ids: list[int], kind: str, window: str, region: str, now: dt.datetime
) -> tuple[dt.datetime, dict[tuple[int, dt.datetime], dict[str, float]]]:
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
    return start, out


def offering_trends(
    *,
    metric: str,
    window: str = "24h",
    region: str = ALL_REGIONS,
    offering_ids: Iterable[int],
    now: dt.datetime | None = None,
) -> dict[int, list[dict[str, Any]]]:
    """Per offering, the metric per trend bucket from the rollups, oldest first:
    {offering_id: [{"t", "value", "lo", "hi", "n"}]}; buckets without the metric are left out, so each
    ``t`` (the bucket start) appears once and increases."""
    ids = sorted(set(offering_ids))
    kind = METRIC_KIND[metric]
    _, counts = _trend_counts(offering_ids=ids, kind=kind, window=window, region=region, now=now or timezone.now())
    prices = {o.offering_id: o.prices for o in current_catalog().offerings}
    series: dict[int, list[dict[str, Any]]] = {oid: [] for oid in ids}
    for (oid, t), kind_counts in sorted(counts.items()):
        item = compute_from_counts({kind: kind_counts}, prices.get(oid)).metrics.get(metric)
        if item:
            series[oid].append({"t": t.isoformat(), **item})
    return series


def offering_series(
    *, offering_id: int, metric: str, window: str = "24h", region: str = ALL_REGIONS, now: dt.datetime | None = None
) -> list[dict[str, Any]]:
    """Metric per time bucket, oldest first: [{"t", "value", "lo", "hi", "n"}] (buckets without data omitted)."""
    return offering_trends(metric=metric, window=window, region=region, offering_ids=[offering_id], now=now)[
        offering_id
    ]


def incidents_list(
    *,
    state: str = "open",
    offering_ids: Iterable[int] | None = None,
    region: str = ALL_REGIONS,
    now: dt.datetime | None = None,
) -> list[dict[str, Any]]:
    """Incidents newest first: open ones, or (state "all") every one opened in the last 7 days or still open."""
    qs = Incident.objects.order_by("-opened_at", "-id")
    if state == "open":
        qs = qs.filter(closed_at__isnull=True)
    else:
        since = (now or timezone.now()) - RECENT_INCIDENTS
        qs = qs.filter(opened_at__gte=since) | qs.filter(closed_at__isnull=True)
    if offering_ids is not None:
        qs = qs.filter(offering_id__in=list(offering_ids))
    if region != ALL_REGIONS:
        qs = qs.filter(region=region)
    return [_incident_dict(row) for row in qs.values(*INCIDENT_FIELDS)]


def open_incidents(*, offering_id: int | None = None) -> list[dict[str, Any]]:
    qs = Incident.objects.filter(closed_at__isnull=True).order_by("-opened_at")
    if offering_id is not None:
        qs = qs.filter(offering_id=offering_id)
    return [
        dict(row)
        for row in qs.values("id", "offering_id", "region", "metric", "direction", "opened_at", "baseline", "observed")
    ]


def recent_incidents(*, since: dt.datetime, offering_id: int | None = None) -> list[dict[str, Any]]:
    qs = Incident.objects.filter(opened_at__gte=since).order_by("-opened_at")
    if offering_id is not None:
        qs = qs.filter(offering_id=offering_id)
    fields = ("id", "offering_id", "region", "metric", "direction", "opened_at", "closed_at", "baseline", "observed")
    return [dict(row) for row in qs.values(*fields)]


def probe_coverage(*, now: dt.datetime | None = None) -> list[dict[str, Any]]:
    """Per configured region, over the last COVERAGE_WINDOW: offerings probed, probes sent, and the
    catalog's active offerings: [{"region", "offerings", "probes", "active"}]."""
    since = (now or timezone.now()) - COVERAGE_WINDOW
    rows = (
        ProbeResult.objects.filter(started_at__gte=since)
        .values("region")
        .annotate(offerings=Count("offering_id", distinct=True), probes=Count("id"))
    )
    counts = {row["region"]: (int(row["offerings"]), int(row["probes"])) for row in rows}
    active = offerings_active_count()
    return [
        {"region": region, "offerings": counts.get(region, (0, 0))[0], "probes": counts.get(region, (0, 0))[1],
         "active": active}
        for region in regions()
    ]  # fmt: skip


def probe_spend(*, since: dt.datetime, until: dt.datetime | None = None) -> dict[str, Any]:
    """What probing cost in [since, until) at each offering's current list prices (probes call providers
    directly, so no usage record holds this): {"probes", "micros", "per_region": {region: micros}}.
    Token counts are the providers' own; probes of offerings no longer in the catalog are left out."""
    until = until or timezone.now()
    prices = {o.offering_id: o.prices for o in current_catalog().offerings}
    rows = (
        ProbeResult.objects.filter(started_at__gte=since, started_at__lt=until)
        .values("offering_id", "region")
        .annotate(n=Count("id"), inp=Sum("input_tokens"), cached=Sum("cached_tokens"), out=Sum("output_tokens"))
    )
    total, probes = 0, 0
    per_region: defaultdict[str, int] = defaultdict(int)
    for row in rows:
        probes += row["n"]
        price = prices.get(row["offering_id"])
        if price is None:
            continue
        cached = int(row["cached"] or 0)
        tokens = Tokens(
            input_uncached=max(0, int(row["inp"] or 0) - cached), cache_read=cached, output=int(row["out"] or 0)
        )
        spent = cost_micros(tokens, price)
        total += spent
        per_region[row["region"]] += spent
    return {"probes": probes, "micros": total, "per_region": dict(per_region)}
