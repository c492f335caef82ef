"""Stripe-side services: a Customer per tenant, top-ups by PaymentIntent.

Postpaid tenants are billed through ONE path: Stripe Billing, from the meter events the ledger writes
(``metering.stripe.meter_push``). There is deliberately no invoice of our own here, so the same usage can never
be billed twice (docs/billing.md, "Postpaid: one billing path").
"""

from __future__ import annotations

from metering.models import TopUp
from metering.money import CENTS_TO_MICROS
from metering.stripe.client import checkout_session_create, payment_intent_create
from metering.stripe.customers import customer_ensure as customer_ensure  # re-exported: console and tasks call it
from tenants.models import Tenant

MIN_TOPUP_MICROS = 1_000_000  # $1: below Stripe's minimum charge once fees are counted


class BillingError(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def topup_start(*, tenant: Tenant, amount_micros: int, payment_method: str | None = None) -> TopUp:
    """Create a PaymentIntent; the balance is credited when Stripe's webhook says it succeeded."""
    _amount_check(amount_micros)
    customer = customer_ensure(tenant=tenant)
    topup = TopUp.objects.create(tenant=tenant, amount_micros=amount_micros)
    intent = payment_intent_create(
        customer_id=customer,
        amount_cents=amount_micros // CENTS_TO_MICROS,
        topup_id=topup.pk,
        tenant_id=tenant.pk,
        payment_method=payment_method,
    )
    topup.payment_intent_id = intent.id
    topup.save(update_fields=["payment_intent_id"])
    return topup


def topup_checkout_start(*, tenant: Tenant, amount_micros: int, success_url: str, cancel_url: str) -> tuple[TopUp, str]:
    """A top-up paid on Stripe's Checkout page (test or live keys); the top-up and the page's URL.

    The PaymentIntent does not exist yet: ``payment_intent.succeeded`` links it to this row by the
    ``topup_id`` in its metadata and credits the balance.
    """
    _amount_check(amount_micros)
    customer = customer_ensure(tenant=tenant)
    topup = TopUp.objects.create(tenant=tenant, amount_micros=amount_micros)
    url = checkout_session_create(
        customer_id=customer,
        amount_cents=amount_micros // CENTS_TO_MICROS,
        topup_id=topup.pk,
        tenant_id=tenant.pk,
        success_url=success_url,
        cancel_url=cancel_url,
    )
    return topup, url


def _amount_check(amount_micros: int) -> None:
    if amount_micros < MIN_TOPUP_MICROS or amount_micros % CENTS_TO_MICROS:
        raise BillingError("invalid_amount", "top-ups are whole cents of at least $1")
