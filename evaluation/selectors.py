"""Reads for the leaderboard API and the frontend: plain data, no HTTP.

Row shape (``leaderboard_rows``): offering_id, model, provider, region, window, n,
computed_at, flags, and for each metric in METRICS ``<metric>`` (point estimate or
None) and ``<metric>_ci`` ([lo, hi] or None).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Count
from django.utils import timezone

from catalog.selectors import offerings_active_count
from contracts.snapshot import OfferingSnapshot
from evaluation.catalog import current_catalog
from evaluation.conf import regions
from evaluation.metrics import DetailRow, PerfRow, compute
from evaluation.models import ALL_REGIONS, Aggregate, Incident, ProbeKind, ProbeResult
from evaluation.services.aggregate import WINDOWS

METRICS = (
    "ttft_p50",
    "ttft_p90",
    "ttft_p99",
    "ttft_10k_p50",
    "tps",
    "availability",
    "error_rate",
    "cache_hit_ratio",
    "billing_cache_hit_ratio",
    "stripped_cache_hit_ratio",
    "effective_input_price",
    "quality_score",
)
SORT_KEYS = (*METRICS, "n", "model", "provider", "region")
DEFAULT_SORT = "ttft_p50"
FLAGS = ("billing_block_breaks_cache", "price_mismatch", "token_overcount", "degraded_quality", "capability_mismatch")
COVERAGE_WINDOW = dt.timedelta(hours=1)  # performance probes run every 5 min, so an hour shows gaps clearly
# Series buckets per window: about 12-28 points, enough for a sparkline, cheap to compute.
SERIES_BUCKET = {"1h": dt.timedelta(minutes=5), "24h": dt.timedelta(hours=1), "7d": dt.timedelta(hours=6)}


def _row(agg: Aggregate, offering: OfferingSnapshot) -> dict[str, Any]:
    row: dict[str, Any] = {
        "offering_id": agg.offering_id,
        "model": offering.model,
        "provider": offering.provider,
        "region": agg.region,
        "window": agg.window,
        "n": agg.n,
        "computed_at": agg.computed_at.isoformat(),
        "flags": list(agg.flags),
    }
    for name in METRICS:
        item = agg.metrics.get(name)
        row[name] = item["value"] if item else None
        row[f"{name}_ci"] = [item["lo"], item["hi"]] if item else None
    return row


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
    offerings = {o.offering_id: o for o in current_catalog().offerings}
    aggregates = Aggregate.objects.filter(window=window, region=region, offering_id__in=list(offerings))
    rows = [_row(agg, offerings[agg.offering_id]) for agg in aggregates]
    rows = [
        r for r in rows if (model is None or r["model"] == model) and (provider is None or r["provider"] == provider)
    ]
    return _sorted(rows, sort)


def offering_series(
    *, offering_id: int, metric: str, window: str = "24h", region: str = ALL_REGIONS, now: dt.datetime | None = None
) -> list[dict[str, Any]]:
    """Metric per time bucket, oldest first: [{"t", "value", "lo", "hi", "n"}] (buckets without data omitted)."""
    now = now or timezone.now()
    bucket, since = SERIES_BUCKET[window], now - WINDOWS[window]
    rows = ProbeResult.objects.filter(offering_id=offering_id, started_at__gte=since)
    if region != ALL_REGIONS:
        rows = rows.filter(region=region)
    perf: dict[int, list[PerfRow]] = {}
    other: dict[int, list[DetailRow]] = {}
    for kind, variant, at, ttft, tps, error, inp, cached, details in rows.values_list(
        "kind", "variant", "started_at", "ttft_ms", "tps", "error_class", "input_tokens", "cached_tokens", "details"
    ):
        index = int((at - since) / bucket)
        if kind == ProbeKind.PERFORMANCE:
            perf.setdefault(index, []).append(PerfRow(variant, ttft, tps, error))
        else:
            other.setdefault(index, []).append(DetailRow(kind, variant, error, inp, cached, details))
    prices = next((o.prices for o in current_catalog().offerings if o.offering_id == offering_id), None)
    points = []
    for index in sorted(set(perf) | set(other)):
        item = compute(perf.get(index, []), other.get(index, []), prices).metrics.get(metric)
        if item:
            points.append({"t": (since + bucket * index).isoformat(), **item})
    return points


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
