"""Balance, top-up through Stripe, invoices and spend alerts."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from frontend.data import metering
from frontend.data.topups import StripeMode, TopUpRefused, stripe_mode, topup_begin
from frontend.forms import AlertForm, TopUpForm, usd_to_micros
from frontend.views.console_base import deny, render_console, tenant_page
from metering.selectors import tenant_topup_get
from metering.services import spend_alert_add, spend_alert_remove
from tenants.permissions import Action, can
from tenants.selectors import Membership


def _page(request: HttpRequest, membership: Membership, topup_form: TopUpForm, alert_form: AlertForm) -> HttpResponse:
    tenant_id = membership.tenant_id
    watched = request.GET.get("topup", "")
    pending = tenant_topup_get(tenant_id=tenant_id, topup_id=int(watched)) if watched.isdigit() else None
    return render_console(
        request, membership, "frontend/console/billing.html", "billing",
        balance=metering.balance_micros(tenant_id=tenant_id), month_spend=metering.month_spend_micros(tenant_id=tenant_id),
        usage=metering.usage_breakdown(tenant_id=tenant_id, days=metering.SUMMARY_DAYS),  # the summary's 30-day counters
        spend_limit=metering.limits_left(tenant=membership.tenant, keys=[])[0],
        topups=metering.topups_shown(tenant_id=tenant_id), invoices=metering.invoices(tenant_id=tenant_id),
        alerts=metering.spend_alerts(tenant_id=tenant_id), topup_form=topup_form, alert_form=alert_form,
        stripe_mode=stripe_mode().value, stripe_off=stripe_mode() is StripeMode.OFF, watched_topup=pending,
        topup_texts=_topup_texts() if pending else None,
    )  # fmt: skip


def _topup_texts() -> dict[str, str]:
    """What the polling script says, translated here (the script itself has no catalog)."""
    return {
        "succeeded": _("Payment confirmed; the balance has been credited."),
        "failed": _("The payment failed; nothing was credited. Try another amount or contact support."),
        "slow": _("Stripe has not confirmed yet. The balance will update by itself once it does."),
        "label_succeeded": _("Succeeded"),
        "label_failed": _("Failed"),
    }


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
    if not form.is_valid():
        return _page(request, membership, form, AlertForm())
    amount = usd_to_micros(form.cleaned_data["amount"]) or 0
    page = reverse("frontend:billing", args=[membership.tenant.slug])
    try:
        started = topup_begin(
            tenant=membership.tenant, amount_micros=amount, return_url=request.build_absolute_uri(page)
        )
    except TopUpRefused as exc:
        form.add_error(None, str(exc))
        response = _page(request, membership, form, AlertForm())
        response.status_code = 400
        return response
    if started.checkout_url:  # live key: card entry on Stripe's Checkout page, then back to this page
        return redirect(started.checkout_url)
    return redirect(page + f"?topup={started.topup_id}")


@tenant_page
def topup_status(request: HttpRequest, membership: Membership, topup_id: int) -> JsonResponse:
    """Polled by the billing page while Stripe confirms: pending, then succeeded (credited) or failed."""
    if not can(membership.role, Action.BILLING_VIEW):
        raise Http404("not found")
    found = tenant_topup_get(tenant_id=membership.tenant_id, topup_id=topup_id)
    if found is None:
        raise Http404("not found")
    return JsonResponse(
        {"id": found.pk, "status": found.status, "amount_micros": found.amount_micros,
         "balance_micros": metering.balance_micros(tenant_id=membership.tenant_id)}
    )  # fmt: skip


@require_POST
@tenant_page
def alert_add(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.TENANT_BILLING_UPDATE):
        return denied
    form = AlertForm(request.POST)
    if not form.is_valid():
        return _page(request, membership, TopUpForm(), form)
    spend_alert_add(
        tenant=membership.tenant,
        threshold_micros=usd_to_micros(form.cleaned_data["threshold"]) or 0,
        email=form.cleaned_data["email"],
    )
    messages.success(request, _("Alert added. You will be notified once this month’s spend reaches it."))
    return redirect("frontend:billing", slug=membership.tenant.slug)


@require_POST
@tenant_page
def alert_remove(request: HttpRequest, membership: Membership, alert_id: int) -> HttpResponse:
    if denied := deny(request, membership, Action.TENANT_BILLING_UPDATE):
        return denied
    spend_alert_remove(tenant=membership.tenant, alert_id=alert_id)
    messages.success(request, _("Alert removed."))
    return redirect("frontend:billing", slug=membership.tenant.slug)
