"""Console entry: pick or create a tenant; the tenant overview (balance, month spend, recent usage)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from foundation.api_errors import ApiError
from frontend.data import metering
from frontend.forms import TenantForm
from frontend.views.console_base import apply_api_error, render_console, tenant_page
from tenants.selectors import Membership, memberships_of
from tenants.services import tenant_create


@login_required
def console_index(request: HttpRequest) -> HttpResponse:
    """Where sign-in lands (LOGIN_REDIRECT_URL): operators on the billing dashboard (their organisations
    are listed there), members in their first organisation, anyone else on "create one"."""
    if request.user.is_staff:
        return redirect("frontend:ops-billing")
    first = memberships_of(user=request.user).first()  # type: ignore[arg-type]
    if first is not None:
        return redirect("frontend:overview", slug=first.tenant.slug)
    return redirect("frontend:tenant-new")


@login_required
def tenant_new(request: HttpRequest) -> HttpResponse:
    form = TenantForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            tenant = tenant_create(slug=form.cleaned_data["slug"], name=form.cleaned_data["name"], owner=request.user)  # type: ignore[arg-type]
        except ApiError as exc:
            apply_api_error(form, exc)
        else:
            return redirect("frontend:overview", slug=tenant.slug)
    context = {"form": form, "section": "console", "memberships": memberships_of(user=request.user)}  # type: ignore[arg-type]
    return render(request, "frontend/console/tenant_new.html", context)


@tenant_page
def overview(request: HttpRequest, membership: Membership) -> HttpResponse:
    tenant_id = membership.tenant_id
    return render_console(
        request,
        membership,
        "frontend/console/overview.html",
        "overview",
        balance=metering.balance_micros(tenant_id=tenant_id),
        month_spend=metering.month_spend_micros(tenant_id=tenant_id),
        usage=metering.usage_breakdown(tenant_id=tenant_id, days=30),
        recent=metering.request_log(tenant_id=tenant_id, limit=5).rows,
        alerts=metering.spend_alerts(tenant_id=tenant_id),
        notifications=metering.notifications(tenant_id=tenant_id),
    )
