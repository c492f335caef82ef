"""Operators' billing dashboard data over ``metering.selectors`` and ``evaluation.selectors``."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from evaluation.selectors import probe_coverage, probe_spend
from frontend.data.metering import usage_breakdown
from metering.selectors import (
    account_drilldown,
    billing_latency,
    books_reconciliation,
    cash_overview,
    findings_open,
    generation_costs_get,
    platform_overview,
    provider_cost_adjustments,
    provider_drift,
    stripe_sync_status,
    tenant_meter_failures,
    tenant_reversals,
    tenant_topups_shown,
    tenant_usage,
    tenants_billing_state,
)

LATENCY_WINDOW = timedelta(hours=1)  # billing latency percentiles over the last hour of ingestion
TOP_TENANTS = 10
PROBE_SPEND_WINDOW = timedelta(hours=24)  # probes are raw rows kept for days; a day answers "what does probing cost"


def findings() -> list[dict[str, Any]]:
    return [{**f, "run_at": datetime.fromisoformat(f["run_at"])} for f in findings_open(limit=20)]


def margin(*, overview: dict[str, Any], start: datetime, end: datetime) -> dict[str, Any]:
    """The window's margin with every cost in it: usage's provider cost, invoice-import adjustments, over-count
    claims back, and probe spend (probes call providers directly; no usage record holds them)."""
    adjust = provider_cost_adjustments(start=start, end=end)
    probes = probe_spend(since=start, until=end).micros
    cost = overview["provider_cost_micros"] + adjust["invoice_adjustments_micros"] - adjust["disputes_claimed_micros"]
    revenue = overview["revenue_micros"]
    net = revenue - cost - probes
    return {
        "revenue_micros": revenue,
        "usage_cost_micros": overview["provider_cost_micros"],
        **adjust,
        "provider_cost_micros": cost,
        "probe_spend_micros": probes,
        "margin_micros": net,
        "margin_ratio": net / revenue if revenue else 0.0,
    }


FIGURE_TITLES = {
    "cash": _("Cash received (Stripe, net of refunds and lost disputes)"),
    "credits": _("Credits granted (demo and promotions)"),
    "liability": _("Liability (tenant balances; negative: owed by postpaid tenants)"),
    "spent": _("Spent by tenants (revenue)"),
    "uncollected": _("Uncollected (charged or reversed beyond a balance)"),
    "provider_cost": _("Provider cost"),
}
PART_NAMES = {
    "demo": _("demo"),
    "promotions": _("promotions"),
    "prepaid": _("prepaid"),
    "postpaid_owed": _("postpaid owed"),
    "hold_shortfall": _("hold shortfall"),
    "reversal_shortfall": _("refund/dispute shortfall"),
    "usage": _("usage"),
    "invoice_adjustments": _("invoice imports"),
    "disputes_claimed": _("over-counts claimed back"),
}


def books() -> dict[str, Any]:
    """``books_reconciliation`` with each figure titled for the page, in the identity's order."""
    found = books_reconciliation()
    figures = [
        {
            "name": name,
            "title": title,
            "micros": found[name].micros,
            "kinds": found[name].kinds,
            "parts": [(PART_NAMES.get(part, part), micros) for part, micros in found[name].parts],
        }
        for name, title in FIGURE_TITLES.items()
    ]
    return {**found, "figures": figures}


ACCOUNT_TITLES = {
    "available": _("Tenant available balances (negative: owed on postpaid)"),
    "spent": _("Tenant spent (revenue)"),
    "provider_cost": _("Provider cost (expense)"),
    "provider_payable": _("Provider cost payable"),
    "stripe_clearing": _("Stripe clearing (money received)"),
    "promotions": _("Promotional credit (expense)"),
    "hold_shortfall": _("Hold shortfall (charged beyond a prepaid balance; uncollected)"),
    "reversal_shortfall": _("Refund/dispute shortfall (already spent; unrecovered)"),
    "provider_dispute": _("Provider dispute (over-counted tokens claimed back)"),
}


def account(*, kind: str) -> dict[str, Any] | None:
    """One ledger account kind for its drill-down page, titled in the page's language."""
    found = account_drilldown(kind=kind)
    if found is not None:
        found["label"] = ACCOUNT_TITLES.get(kind, found["label"])
    return found


def dashboard(days: int = 30) -> dict[str, Any]:
    end = timezone.now()
    start = end - timedelta(days=days)
    overview = platform_overview(start=start, end=end)
    window = margin(overview=overview, start=start, end=end)
    return {
        "overview": overview,
        "margin": window,
        "books": books(),
        "usage": usage_breakdown(tenant_id=None, days=days),
        "margin_ratio": window["margin_ratio"],
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
        "topups": tenant_topups_shown(tenant_id=tenant_id),
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
