"""Operators' billing dashboard data over ``metering.selectors`` and ``evaluation.selectors``.

Probe coverage prefers ``evaluation.selectors.probe_coverage``; until evaluation offers it,
it counts evaluation's probe results per region (read-only).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from catalog.models import Offering
from frontend.data.metering import usage_breakdown
from frontend.data.optional import optional_function, optional_model
from metering.selectors import billing_latency, findings_open, platform_overview, stripe_sync_status

COVERAGE_WINDOW = timedelta(hours=1)  # performance probes run every 5 min, so an hour shows gaps clearly
LATENCY_WINDOW = timedelta(hours=1)  # billing latency percentiles over the last hour of ingestion
TOP_TENANTS = 10


def findings() -> list[dict[str, Any]]:
    return [{**f, "run_at": datetime.fromisoformat(f["run_at"])} for f in findings_open(limit=20)]


def probe_coverage() -> list[dict[str, Any]]:
    """Per region: offerings probed in the last hour out of active offerings."""
    selector = optional_function("evaluation.selectors", "probe_coverage")
    if selector is not None:
        return list(selector())
    probe = optional_model("evaluation.models", "ProbeResult")
    if probe is None:
        return []
    active = Offering.objects.exclude(status="disabled").count()
    rows = (
        probe.objects.filter(started_at__gte=timezone.now() - COVERAGE_WINDOW)
        .values("region")
        .annotate(offerings=Count("offering_id", distinct=True), probes=Count("id"))
    )
    by_region = {row["region"]: row for row in rows}
    return [
        {"region": region, "offerings": by_region.get(region, {}).get("offerings", 0),
         "probes": by_region.get(region, {}).get("probes", 0), "active": active}
        for region in settings.TOKENWAY_REGIONS
    ]  # fmt: skip


def dashboard(days: int = 30) -> dict[str, Any]:
    end = timezone.now()
    overview = platform_overview(start=end - timedelta(days=days), end=end)
    return {
        "overview": overview,
        "usage": usage_breakdown(tenant_id=None, days=days),
        "margin_ratio": overview["margin_bps"] / 10_000,
        "top_tenants": [
            {**row, "margin_micros": row["revenue_micros"] - row["cost_micros"]}
            for row in overview["per_tenant"][:TOP_TENANTS]
        ],
        "stripe": stripe_sync_status(),
        "latency": billing_latency(since=end - LATENCY_WINDOW),
        "findings": findings(),
        "coverage": probe_coverage(),
    }
