"""Operators' billing dashboard data over ``metering.selectors`` and ``evaluation.selectors``."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from evaluation.selectors import probe_coverage, probe_spend
from frontend.data.metering import usage_breakdown
from metering.selectors import (
    billing_latency,
    cash_overview,
    findings_open,
    generation_costs_get,
    platform_overview,
    provider_drift,
    stripe_sync_status,
    tenant_meter_failures,
    tenant_reversals,
    tenant_topups,
    tenant_usage,
    tenants_billing_state,
)

LATENCY_WINDOW = timedelta(hours=1)  # billing latency percentiles over the last hour of ingestion
TOP_TENANTS = 10
PROBE_SPEND_WINDOW = timedelta(hours=24)  # probes are raw rows kept for days; a day answers "what does probing cost"


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
        "cash": cash_overview(start=end - timedelta(days=days), end=end),
        "tenants": tenants_billing_state(start=end - timedelta(days=days), end=end),
        "probe_spend": probe_spend(since=end - PROBE_SPEND_WINDOW, until=end),
        "drift": provider_drift(since=end - timedelta(days=days)),
    }


def tenant_drilldown(*, tenant_id: int, days: int = 30) -> dict[str, Any] | None:
    """One tenant's money for staff: revenue, provider cost and margin, top-ups, refunds and disputes,
    Stripe meter sync and the events Stripe has not accepted, usage per model, reconciliation findings."""
    end = timezone.now()
    start = end - timedelta(days=days)
    state = tenants_billing_state(start=start, end=end, tenant_ids=[tenant_id])
    if not state:
        return None
    marker = f"tenant:{tenant_id}"
    return {
        "tenant": state[0],
        "topups": list(tenant_topups(tenant_id=tenant_id)),
        "reversals": tenant_reversals(tenant_id=tenant_id),
        "meter_failures": tenant_meter_failures(tenant_id=tenant_id),
        "by_model": tenant_usage(tenant_id=tenant_id, start=start, end=end, group="model", with_cost=True),
        "findings": [
            f
            for f in findings()
            if marker in f["subject"] or (isinstance(f["detail"], dict) and f["detail"].get("tenant_id") == tenant_id)
        ],
    }


def request_costs(*, request_id: str) -> dict[str, Any] | None:
    """One request as staff see it: the tenant's charge, the provider cost (booked, ours, theirs), the margin."""
    return generation_costs_get(request_id=request_id)
