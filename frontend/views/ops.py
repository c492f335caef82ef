"""Operators' billing dashboard: staff only (others get 404, anonymous users the login page)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from frontend.data.ops import account, dashboard, request_costs, tenant_drilldown
from tenants.selectors import memberships_of

DASHBOARD_DAYS = 30


@login_required
def billing_dashboard(request: HttpRequest) -> HttpResponse:
    if not request.user.is_staff:
        raise Http404("not found")
    context = {
        "section": "ops",
        "d": dashboard(DASHBOARD_DAYS),
        "days": DASHBOARD_DAYS,
        "memberships": memberships_of(user=request.user),
    }
    return render(request, "frontend/ops/billing.html", context)


@login_required
def request_detail(request: HttpRequest, request_id: str) -> HttpResponse:
    """One request's money: what the tenant paid, what the provider costs us, the margin (staff only)."""
    if not request.user.is_staff:
        raise Http404("not found")
    record = request_costs(request_id=request_id)
    if record is None:
        raise Http404("no such request")
    return render(request, "frontend/ops/request.html", {"section": "ops", "r": record})


@login_required
def tenant_detail(request: HttpRequest, tenant_id: int) -> HttpResponse:
    """One tenant's billing state for staff (others: 404)."""
    if not request.user.is_staff:
        raise Http404("not found")
    data = tenant_drilldown(tenant_id=tenant_id, days=DASHBOARD_DAYS)
    if data is None:
        raise Http404("no such tenant")
    return render(request, "frontend/ops/tenant.html", {"section": "ops", "t": data, "days": DASHBOARD_DAYS})


@login_required
def account_detail(request: HttpRequest, kind: str) -> HttpResponse:
    """One ledger account kind behind a dashboard figure: its accounts' balances and latest lines (staff only)."""
    if not request.user.is_staff:
        raise Http404("not found")
    found = account(kind=kind)
    if found is None:
        raise Http404("no such account")
    return render(request, "frontend/ops/account.html", {"section": "ops", "a": found})
