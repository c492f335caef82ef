"""A tenant's Stripe customer, and the switch to postpaid that needs one with a card Stripe can bill."""

from __future__ import annotations

import logging

import stripe
from django.conf import settings

from metering.stripe.client import customer_create, payment_method_attach
from tenants.models import BillingMode, Tenant
from tenants.services import tenant_payment_method_set, tenant_settings_update

logger = logging.getLogger(__name__)


class PostpaidRefused(ValueError):
    """The switch to postpaid did not happen; ``code`` says why, the tenant is as it was."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def customer_ensure(*, tenant: Tenant) -> str:
    """The tenant's Stripe customer id, created once (the idempotency key makes a retry return the same one)."""
    if tenant.stripe_customer_id:
        return tenant.stripe_customer_id
    customer_id = customer_create(tenant_id=tenant.pk, name=tenant.name)
    # Race: two workers may create at once; both get the same customer (same idempotency key).
    Tenant.objects.filter(pk=tenant.pk, stripe_customer_id="").update(stripe_customer_id=customer_id)
    tenant.refresh_from_db(fields=["stripe_customer_id"])
    return tenant.stripe_customer_id


def postpaid_enable(*, tenant: Tenant, payment_method: str) -> Tenant:
    """Switch the tenant to postpaid with a card Stripe can bill: its Stripe customer (created once), the
    payment method attached to it as the invoices' default, then the switch. A card Stripe refuses, or Stripe
    unreachable, raises PostpaidRefused and the tenant stays as it was (a customer made on the way is kept:
    the next attempt and top-ups reuse it)."""
    if not settings.STRIPE_API_KEY:
        raise PostpaidRefused("stripe_not_configured", "Stripe is not configured on this server (STRIPE_API_KEY)")
    try:
        customer = customer_ensure(tenant=tenant)
        attached = payment_method_attach(customer_id=customer, payment_method=payment_method)
    except stripe.CardError as exc:
        raise PostpaidRefused("payment_method_declined", f"Stripe declined the card: {exc.user_message}") from exc
    except stripe.InvalidRequestError as exc:
        raise PostpaidRefused(
            "payment_method_invalid", f"Stripe refused the payment method: {exc.user_message}"
        ) from exc
    except stripe.StripeError as exc:
        logger.warning("postpaid switch of tenant %d: Stripe failed: %s", tenant.pk, exc)
        raise PostpaidRefused("stripe_unavailable", "Stripe could not be reached; nothing changed, try again") from exc
    tenant_payment_method_set(tenant=tenant, customer_id=customer, payment_method_id=attached)
    return tenant_settings_update(tenant=tenant, billing_mode=BillingMode.POSTPAID)
