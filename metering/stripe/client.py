"""The one way Tokenway talks to Stripe: the official library, configured once.

Base URLs come from settings (``STRIPE_API_BASE`` for the API, localstripe in
tests; ``STRIPE_METER_API_BASE`` for meter events, the emulator in tests),
with timeouts, bounded retries and an explicit idempotency key on every POST.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import requests
import stripe
from django.conf import settings

from foundation.redis_client import get_redis

# The library logs every request at INFO; meter pushes would flood the worker log.
logging.getLogger("stripe").setLevel(logging.WARNING)

CONNECT_TIMEOUT_S = 3.0
READ_TIMEOUT_S = 10.0  # Stripe answers in well under a second; a hung call must not stall the stripe queue
MAX_NETWORK_RETRIES = 2  # the library retries 409/429/5xx and connection errors with backoff
METER_SESSION_KEY = "tw:stripe:meter_session"
METER_SESSION_MARGIN_S = 60  # renew a session this long before Stripe says it expires

StripeError = stripe.StripeError


class MeterSessionExpired(Exception):
    """The meter event session token was refused; get a new one and retry."""


def _client(bases: dict[str, str]) -> stripe.StripeClient:
    return stripe.StripeClient(
        settings.STRIPE_API_KEY or "sk_test_missing",
        base_addresses=bases,  # type: ignore[arg-type]
        max_network_retries=MAX_NETWORK_RETRIES,
        http_client=stripe.RequestsClient(timeout=(CONNECT_TIMEOUT_S, READ_TIMEOUT_S)),
    )


@lru_cache(maxsize=1)
def stripe_client() -> stripe.StripeClient:
    """Customers, PaymentIntents, invoices: ``STRIPE_API_BASE`` (empty = Stripe itself)."""
    return _client({"api": settings.STRIPE_API_BASE} if settings.STRIPE_API_BASE else {})


@lru_cache(maxsize=1)
def meter_client() -> stripe.StripeClient:
    """Meter events and their sessions: ``STRIPE_METER_API_BASE`` for both when set (the emulator)."""
    base = settings.STRIPE_METER_API_BASE
    return _client({"api": base, "meter_events": base} if base else {})


def clients_reset() -> None:
    """Forget the configured clients (tests change the base URLs)."""
    stripe_client.cache_clear()
    meter_client.cache_clear()


def _opts(idempotency_key: str, **extra: Any) -> Any:
    return {"idempotency_key": idempotency_key, **extra}


def customer_create(*, tenant_id: int, name: str, email: str = "") -> str:
    params: dict[str, Any] = {"name": name, "metadata": {"tenant_id": str(tenant_id)}}
    if email:
        params["email"] = email
    customer = stripe_client().v1.customers.create(params=params, options=_opts(f"customer:{tenant_id}"))  # type: ignore[arg-type]
    return str(customer.id)


def payment_method_attach(*, customer_id: str, payment_method: str) -> str:
    """Attach a payment method to the customer and make it the default for Stripe's invoices (postpaid); its id
    (a test token such as ``pm_card_visa`` becomes a new ``pm_…``). Raises stripe.CardError when the card is
    declined, stripe.InvalidRequestError when it does not exist."""
    client = stripe_client()
    attached = client.v1.payment_methods.attach(payment_method, params={"customer": customer_id})
    client.v1.customers.update(
        customer_id,
        params={"invoice_settings": {"default_payment_method": attached.id}},
        options=_opts(f"customer-default-pm:{customer_id}:{attached.id}"),
    )
    return str(attached.id)


def payment_intent_create(
    *, customer_id: str, amount_cents: int, topup_id: int, tenant_id: int, payment_method: str | None = None
) -> stripe.PaymentIntent:
    params: dict[str, Any] = {
        "amount": amount_cents,
        "currency": "usd",
        "customer": customer_id,
        "metadata": {"tenant_id": str(tenant_id), "topup_id": str(topup_id)},
    }
    if payment_method:
        params.update(payment_method=payment_method, confirm=True)
    return stripe_client().v1.payment_intents.create(params=params, options=_opts(f"topup:{topup_id}"))  # type: ignore[arg-type]


def checkout_session_create(
    *, customer_id: str, amount_cents: int, topup_id: int, tenant_id: int, success_url: str, cancel_url: str
) -> str:
    """A Stripe-hosted Checkout page for one top-up (live keys: card entry on Stripe's page); its URL.

    The PaymentIntent it creates carries the top-up's metadata, so ``payment_intent.succeeded`` credits it.
    """
    metadata = {"tenant_id": str(tenant_id), "topup_id": str(topup_id)}
    params: dict[str, Any] = {
        "mode": "payment",
        "customer": customer_id,
        "client_reference_id": str(topup_id),
        "line_items": [
            {
                "quantity": 1,
                "price_data": {
                    "currency": "usd",
                    "unit_amount": amount_cents,
                    "product_data": {"name": "Tokenway prepaid balance"},
                },
            }
        ],
        "payment_intent_data": {"metadata": metadata},
        "metadata": metadata,
        "success_url": success_url,
        "cancel_url": cancel_url,
    }
    session = stripe_client().v1.checkout.sessions.create(params=params, options=_opts(f"checkout:{topup_id}"))  # type: ignore[arg-type]
    return str(session.url)


def refunds_list(*, charge_id: str) -> list[dict[str, Any]]:
    """Every refund of a charge (a ``charge.refunded`` event may omit them), as plain dicts."""
    listed = stripe_client().v1.refunds.list(params={"charge": charge_id, "limit": 100})
    return [refund.to_dict() for refund in listed.auto_paging_iter()]


@dataclass(frozen=True)
class MeterEventOut:
    identifier: str
    customer_id: str
    value: int
    timestamp: datetime


def meter_session_token(*, renew: bool = False) -> str:
    """A v2 meter event session token, shared by all pushers through Redis until it nears expiry."""
    client = get_redis()
    if not renew and (cached := client.get(METER_SESSION_KEY)):
        return cached.decode() if isinstance(cached, bytes) else str(cached)
    session = meter_client().v2.billing.meter_event_session.create(options=_opts(f"meter-session:{_now_ms()}"))
    expires = datetime.fromisoformat(str(session.expires_at).replace("Z", "+00:00"))
    ttl = int(expires.timestamp() - time.time()) - METER_SESSION_MARGIN_S
    token = str(session.authentication_token)
    if ttl > 0:
        client.set(METER_SESSION_KEY, token, ex=ttl)
    return token


def _now_ms() -> int:
    return int(time.time() * 1000)


def meter_events_send(*, events: list[MeterEventOut], idempotency_key: str) -> None:
    """POST one chunk to the v2 meter event stream; Stripe dedupes on each event's identifier."""
    body = {
        "events": [
            {
                "event_name": settings.STRIPE_METER_EVENT_NAME,
                "identifier": event.identifier,
                "timestamp": event.timestamp.isoformat().replace("+00:00", "Z"),
                "payload": {"stripe_customer_id": event.customer_id, "value": str(event.value)},
            }
            for event in events
        ]
    }
    for renew in (False, True):  # an expired session is renewed once, then the error is raised
        try:
            meter_client().v2.billing.meter_event_stream.create(
                params=body,  # type: ignore[arg-type]
                options=_opts(idempotency_key, api_key=meter_session_token(renew=renew)),
            )
            return
        except stripe.AuthenticationError as exc:
            get_redis().delete(METER_SESSION_KEY)
            if renew:
                raise MeterSessionExpired(str(exc)) from exc


def meter_accepted_totals(*, since: datetime, until: datetime) -> dict[str, int] | None:
    """Accepted meter value per customer from the emulator's read endpoint (None when not available).

    Against real Stripe this would read the meter's event summaries; the emulator
    exposes the same totals at ``/_emulator/totals``.
    """
    base = settings.STRIPE_METER_API_BASE
    if not base:
        return None
    params: dict[str, str | float] = {
        "event_name": settings.STRIPE_METER_EVENT_NAME,
        "since": since.timestamp(),
        "until": until.timestamp(),
    }
    try:
        response = requests.get(f"{base}/_emulator/totals", params=params, timeout=(CONNECT_TIMEOUT_S, READ_TIMEOUT_S))
    except requests.RequestException:
        return None
    if response.status_code != 200:
        return None
    return {str(k): int(v) for k, v in response.json()["customers"].items()}
