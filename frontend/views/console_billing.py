"""Balance, top-up through Stripe, invoices and spend alerts."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from frontend.data import metering
from frontend.data.optional import optional_function, optional_model
from frontend.forms import AlertForm, TopUpForm, usd_to_micros
from frontend.views.console_base import deny, render_console, tenant_page
from tenants.models import Membership
from tenants.permissions import Action


def _page(request: HttpRequest, membership: Membership, topup_form: TopUpForm, alert_form: AlertForm) -> HttpResponse:
    tenant_id = membership.tenant_id
    return render_console(
        request, membership, "frontend/console/billing.html", "billing",
        balance=metering.balance_micros(tenant_id=tenant_id), month_spend=metering.month_spend_micros(tenant_id=tenant_id),
        topups=metering.topups(tenant_id=tenant_id), invoices=metering.invoices(tenant_id=tenant_id),
        alerts=metering.spend_alerts(tenant_id=tenant_id), topup_form=topup_form, alert_form=alert_form,
        topup_available=_checkout_service() is not None,
    )  # fmt: skip


def _checkout_service() -> Callable[..., str] | None:
    return optional_function("metering.stripe_checkout", "topup_checkout_start")


@tenant_page
def billing(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.BILLING_VIEW):
        return denied
    return _page(request, membership, TopUpForm(), AlertForm())


@require_POST
@tenant_page
def topup(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.BILLING_MANAGE):
        return denied
    form = TopUpForm(request.POST)
    start = _checkout_service()
    if not form.is_valid() or start is None:
        if start is None:
            form.add_error(None, _("Top-ups through Stripe are not configured on this server yet."))
        return _page(request, membership, form, AlertForm())
    return_url = request.build_absolute_uri(f"/console/{membership.tenant.slug}/billing/")
    url = start(
        tenant=membership.tenant, amount_micros=usd_to_micros(form.cleaned_data["amount"]), return_url=return_url
    )
    return redirect(url)


@require_POST
@tenant_page
def alert_add(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.TENANT_BILLING_UPDATE):
        return denied
    form = AlertForm(request.POST)
    alert_model = optional_model("metering.models", "SpendAlert")
    if not form.is_valid() or alert_model is None:
        return _page(request, membership, TopUpForm(), form)
    alert_model.objects.create(
        tenant_id=membership.tenant_id,
        threshold_micros=usd_to_micros(form.cleaned_data["threshold"]),
        email=form.cleaned_data["email"],
    )
    messages.success(request, _("Alert added. You will be notified once this month’s spend reaches it."))
    return redirect("frontend:billing", slug=membership.tenant.slug)


@require_POST
@tenant_page
def alert_remove(request: HttpRequest, membership: Membership, alert_id: int) -> HttpResponse:
    if denied := deny(request, membership, Action.TENANT_BILLING_UPDATE):
        return denied
    alert_model = optional_model("metering.models", "SpendAlert")
    if alert_model is not None:
        alert_model.objects.filter(tenant_id=membership.tenant_id, pk=alert_id).delete()
    messages.success(request, _("Alert removed."))
    return redirect("frontend:billing", slug=membership.tenant.slug)
