"""Usage charts and the request log (live: new rows arrive when metering pushes an update)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apikeys.selectors import tenant_keys
from frontend.data import metering
from frontend.views.console_base import deny, render_console, tenant_page
from tenants.models import Membership
from tenants.permissions import Action

USAGE_DAYS = 30


@tenant_page
def usage(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.USAGE_VIEW):
        return denied
    data = metering.usage_breakdown(tenant_id=membership.tenant_id, days=USAGE_DAYS)
    names = {k.pk: f"{k.name} ({k.prefix}…{k.last_four})" for k in tenant_keys(membership=membership)}
    for row in data["by_key"]:
        row["group"] = names.get(row["group"], f"#{row['group']}")
    return render_console(request, membership, "frontend/console/usage.html", "usage", usage=data, days=USAGE_DAYS)


@tenant_page
def requests_log(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.USAGE_VIEW):
        return denied
    before = request.GET.get("before")
    rows = metering.request_log(
        tenant_id=membership.tenant_id, before_id=int(before) if before and before.isdigit() else None
    )
    if request.GET.get("fragment"):
        return render(request, "frontend/console/_request_rows.html", {"rows": rows})
    return render_console(
        request, membership, "frontend/console/requests.html", "requests", rows=rows, limit=metering.LOG_LIMIT
    )


@tenant_page
def live_summary(request: HttpRequest, membership: Membership) -> HttpResponse:
    """Balance and month spend as a fragment, fetched when a live update arrives."""
    tenant_id = membership.tenant_id
    context = {
        "balance": metering.balance_micros(tenant_id=tenant_id),
        "month_spend": metering.month_spend_micros(tenant_id=tenant_id),
    }
    return render(request, "frontend/console/_summary.html", context)
