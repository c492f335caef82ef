"""Operators' billing dashboard data over ``metering.selectors`` and ``evaluation.selectors``."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from evaluation.selectors import probe_coverage
from frontend.data.metering import usage_breakdown
from metering.selectors import (
    billing_latency,
    findings_open,
    generation_costs_get,
    platform_overview,
    stripe_sync_status,
)

LATENCY_WINDOW = timedelta(hours=1)  # billing latency percentiles over the last hour of ingestion
TOP_TENANTS = 10


def findings() -> list[dict[str, Any]]:
    return [{**f, "run_at": datetime.fromisoformat(f["run_at"])} for f in findings_open(limit=20)]


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


def request_costs(*, request_id: str) -> dict[str, Any] | None:
    """One request as staff see it: the tenant's charge, the provider cost (booked, ours, theirs), the margin."""
    return generation_costs_get(request_id=request_id)
