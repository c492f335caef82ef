"""Recompute aggregates per offering x region (and "all") x window from the raw probe rows."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from contracts.usage import Prices
from evaluation.metrics import DetailRow, PerfRow, compute
from evaluation.models import ALL_REGIONS, Aggregate, ProbeKind, ProbeResult

WINDOWS = {"1h": dt.timedelta(hours=1), "24h": dt.timedelta(hours=24), "7d": dt.timedelta(days=7)}
# Long windows move slowly and read many rows: recompute them only when their aggregates are this old.
WINDOW_REFRESH_S = {"1h": 0, "24h": 300, "7d": 1800}

Key = tuple[int, str]  # (offering_id, region)


def _load(since: dt.datetime, until: dt.datetime) -> tuple[dict[Key, list[PerfRow]], dict[Key, list[DetailRow]]]:
    perf: dict[Key, list[PerfRow]] = defaultdict(list)
    other: dict[Key, list[DetailRow]] = defaultdict(list)
    window = ProbeResult.objects.filter(started_at__gte=since, started_at__lt=until)
    fields = ("offering_id", "region", "variant", "ttft_ms", "tps", "error_class")
    for oid, region, variant, ttft, tps, error in (
        window.filter(kind=ProbeKind.PERFORMANCE).values_list(*fields).iterator(chunk_size=5000)
    ):
        row = PerfRow(variant, ttft, tps, error)
        perf[(oid, region)].append(row)
        perf[(oid, ALL_REGIONS)].append(row)
    detail_fields = (
        "offering_id",
        "region",
        "kind",
        "variant",
        "error_class",
        "input_tokens",
        "cached_tokens",
        "details",
    )
    for oid, region, *rest in (
        window.exclude(kind=ProbeKind.PERFORMANCE).values_list(*detail_fields).iterator(chunk_size=2000)
    ):
        detail = DetailRow(*rest)
        other[(oid, region)].append(detail)
        other[(oid, ALL_REGIONS)].append(detail)
    return perf, other


def window_is_stale(window: str, now: dt.datetime) -> bool:
    latest = (
        Aggregate.objects.filter(window=window).order_by("-computed_at").values_list("computed_at", flat=True).first()
    )
    return latest is None or (now - latest).total_seconds() >= WINDOW_REFRESH_S[window]


def aggregates_refresh(*, window: str, prices: dict[int, Prices], now: dt.datetime | None = None) -> int:
    """Replace the window's aggregates with fresh ones; returns how many (offering, region) pairs."""
    now = now or timezone.now()
    perf, other = _load(now - WINDOWS[window], now)
    rows = []
    for key in set(perf) | set(other):
        computed = compute(perf.get(key, []), other.get(key, []), prices.get(key[0]))
        rows.append(
            Aggregate(
                offering_id=key[0],
                region=key[1],
                window=window,
                computed_at=now,
                n=computed.n,
                metrics=computed.metrics,
                flags=computed.flags,
            )
        )
    # Race: two refreshes may overlap; upserts on the unique key never collide, and each only
    # deletes rows older than its own start (pairs that vanished from the window).
    with transaction.atomic():
        Aggregate.objects.bulk_create(
            rows,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=["offering_id", "region", "window"],
            update_fields=["computed_at", "n", "metrics", "flags"],
        )
        Aggregate.objects.filter(window=window, computed_at__lt=now).delete()
    return len(rows)
