"""Top-ups through Stripe for the console: start one (``metering.billing.topup_start``); the views read its
status with ``metering.selectors.tenant_topup_get``.

Card entry: with a Stripe *test* key (``sk_test_…``, which is what ``make run``'s offline Stripe,
localstripe, uses) the PaymentIntent is confirmed with Stripe's test card ``pm_card_visa``; with a live
key (``sk_live_…``) the browser is sent to a Stripe Checkout page for the amount, and the same
``payment_intent.succeeded`` webhook credits the balance.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import stripe
from django.conf import settings
from django.utils.translation import gettext as _

from metering.billing import BillingError, topup_checkout_start, topup_start
from tenants.selectors import Tenant

TEST_CARD = "pm_card_visa"  # Stripe's (and localstripe's) always-succeeding test payment method


class StripeMode(StrEnum):
    OFF = "off"
    TEST = "test"
    LIVE = "live"


class TopUpRefused(Exception):
    """A top-up that could not be started; the message is shown on the form."""


def stripe_mode() -> StripeMode:
    key = settings.STRIPE_API_KEY or ""
    if not key:
        return StripeMode.OFF
    return StripeMode.TEST if key.startswith(("sk_test_", "rk_test_")) else StripeMode.LIVE


@dataclass(frozen=True)
class TopUpStarted:
    topup_id: int
    checkout_url: str | None = None  # live keys: Stripe's Checkout page, where the browser goes next


def topup_begin(*, tenant: Tenant, amount_micros: int, return_url: str = "") -> TopUpStarted:
    """Test keys: create and confirm a PaymentIntent. Live keys: a Checkout page that comes back to
    ``return_url``. The webhook credits the balance later."""
    mode = stripe_mode()
    if mode is StripeMode.OFF:
        raise TopUpRefused(
            _("Top-ups through Stripe are not configured on this server (STRIPE_API_KEY is empty). Ask an operator.")
        )
    try:
        if mode is StripeMode.LIVE:
            topup, url = topup_checkout_start(
                tenant=tenant, amount_micros=amount_micros, success_url=return_url, cancel_url=return_url
            )
            return TopUpStarted(topup_id=topup.pk, checkout_url=url)
        return TopUpStarted(topup_start(tenant=tenant, amount_micros=amount_micros, payment_method=TEST_CARD).pk)
    except BillingError as exc:
        raise TopUpRefused(str(exc)) from exc
    except stripe.APIConnectionError as exc:
        raise TopUpRefused(_("Stripe could not be reached; nothing was charged. Try again in a minute.")) from exc
    except stripe.StripeError as exc:
        message = exc.user_message or str(exc)
        raise TopUpRefused(_("Stripe refused the payment: %(message)s") % {"message": message}) from exc
