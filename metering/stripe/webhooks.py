"""Stripe webhooks: verify the signature, then apply each event id exactly once.

The dedupe row (StripeEvent) and the ledger credit are written in one
transaction, so a replayed event changes nothing and a crash in between
leaves neither. Credits are keyed by the PaymentIntent/Invoice id as well, so
two different events about the same payment still credit once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import stripe
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from metering.models import StripeEvent, TopUp, TopUpStatus
from metering.money import CENTS_TO_MICROS as CENTS_TO_MICROS  # re-exported: metering.billing reads it here
from metering.receipts import topup_receipt_send
from metering.services import balance_topup
from metering.stripe.lifecycle import LIFECYCLE_HANDLERS
from tenants.models import Tenant

logger = logging.getLogger(__name__)

SIGNATURE_TOLERANCE_S = 300  # Stripe's default: refuse signatures older than five minutes
# Stripe's amounts are integers of the currency's smallest unit with at most 8 digits (12 for a few
# zero-decimal currencies): anything larger is not a Stripe amount, and 10^20 cents would overflow the ledger.
MAX_AMOUNT_CENTS = 999_999_999_999
# The amount members of the objects we apply (payment intents, charges, refunds, disputes, invoices).
AMOUNT_FIELDS = ("amount", "amount_received", "amount_paid", "amount_captured", "amount_refunded", "amount_due")
MEMO_MAX = 200  # metering_journal.memo; a longer URL is not kept rather than cut


class WebhookRefused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def webhook_verify(*, payload: bytes, signature: str | None) -> stripe.Event:
    """The signature first (it is the authentication), then the body: a Stripe event envelope or a refusal."""
    secret = settings.STRIPE_WEBHOOK_SECRET
    if not secret:
        raise WebhookRefused("webhook_not_configured", "the webhook secret is not configured")
    if not signature:
        raise WebhookRefused("signature_missing", "Stripe-Signature header is missing")
    _refuse_future_timestamp(signature)
    try:
        text = payload.decode("utf-8")
        stripe.WebhookSignature.verify_header(text, signature, secret, tolerance=SIGNATURE_TOLERANCE_S)
        body = json.loads(text)
    except stripe.SignatureVerificationError as exc:
        raise WebhookRefused("signature_invalid", str(exc)) from exc
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, or nested beyond the parser's depth
        raise WebhookRefused("invalid_json", "the body is not valid JSON") from exc
    if not _is_event_envelope(body):
        raise WebhookRefused(
            "invalid_payload", "the body is not a Stripe event (object, id, type, created, data.object)"
        )
    _amounts_check(body["data"]["object"])
    event: stripe.Event = stripe.Webhook.construct_event(text, signature, secret, tolerance=SIGNATURE_TOLERANCE_S)
    return event


def _refuse_future_timestamp(signature: str) -> None:
    """Stripe's library refuses only signatures older than the tolerance; one dated ahead is refused here."""
    stamps = [part[2:] for part in signature.split(",") if part.strip().startswith("t=")]
    try:
        stamp = int(stamps[0].strip()) if stamps else None
    except ValueError:
        stamp = None
    if stamp is None:
        raise WebhookRefused("signature_invalid", "Stripe-Signature header carries no timestamp")
    if stamp > timezone.now().timestamp() + SIGNATURE_TOLERANCE_S:
        raise WebhookRefused("signature_invalid", "Stripe-Signature timestamp is in the future beyond the tolerance")


def _is_event_envelope(body: Any) -> bool:
    """What stripe_event_apply reads; a signed array or a partial object must be a 400, not an AttributeError."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), dict):
        return False
    obj = body["data"].get("object")
    return (
        body.get("object") == "event"
        and isinstance(body.get("id"), str)
        and isinstance(body.get("type"), str)
        and isinstance(body.get("created"), int)
        and isinstance(obj, dict)
        and isinstance(obj.get("id"), str)
    )


def _amounts_check(obj: dict[str, Any]) -> None:
    """Every amount we may book is a whole, non-negative number of cents within Stripe's range: a string
    ("1000"), a float or 10^20 is a 400 naming the member, before anything is recorded or booked."""
    listed = obj.get("refunds")
    refunds = listed.get("data") if isinstance(listed, dict) else None
    items = [("", obj)]
    if isinstance(refunds, list):
        items += [(f"refunds.data[{i}].", refund) for i, refund in enumerate(refunds) if isinstance(refund, dict)]
    for prefix, item in items:
        for name in AMOUNT_FIELDS:
            value = item.get(name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_AMOUNT_CENTS:
                raise WebhookRefused(
                    "invalid_amount",
                    f"data.object.{prefix}{name} must be a whole number of cents from 0 to {MAX_AMOUNT_CENTS}, "
                    f"not {str(value)[:40]!r}",
                )


def _dedupe_insert(event: stripe.Event, outcome: str) -> bool:
    sql = (
        "INSERT INTO metering_stripeevent (event_id, type, created, outcome, received_at) "
        "VALUES (%s, %s, %s, %s, now()) ON CONFLICT (event_id) DO NOTHING RETURNING id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [event.id, event.type[:64], int(event.created or 0), outcome])
        return cursor.fetchone() is not None


def stripe_event_apply(*, event: stripe.Event) -> str:
    """Returns applied | duplicate | ignored | unattributed.

    ``duplicate`` also when a new event id is about money already moved (a payment already credited,
    a refund already debited): the event row records that outcome, not "applied".
    """
    handler = _HANDLERS.get(event.type) or LIFECYCLE_HANDLERS.get(event.type)
    with transaction.atomic():
        if not _dedupe_insert(event, "applied" if handler else "ignored"):
            return "duplicate"
        if handler is None:
            return "ignored"
        outcome = handler(event.data.object.to_dict()) or "applied"
        if outcome != "applied":
            StripeEvent.objects.filter(event_id=event.id).update(outcome=outcome)
    return outcome


def _tenant_of(obj: Any) -> Tenant | None:
    metadata = obj.get("metadata") or {}
    tenant_id = metadata.get("tenant_id")
    if tenant_id and str(tenant_id).isdigit():
        return Tenant.objects.filter(pk=int(tenant_id)).first()
    customer = obj.get("customer")
    return Tenant.objects.filter(stripe_customer_id=customer).first() if customer else None


def _payment_intent_succeeded(intent: Any) -> str:
    tenant = _tenant_of(intent)
    amount = int(intent.get("amount_received") or intent.get("amount") or 0) * CENTS_TO_MICROS
    if tenant is None or amount <= 0:
        logger.error("payment_intent %s: no tenant or amount", intent.get("id"))
        return "unattributed"
    pi = intent["id"]
    if not balance_topup(tenant=tenant, amount_micros=amount, idempotency_key=f"topup:{pi}", source="stripe"):
        return "duplicate"  # another event id about a payment already credited
    _topup_link(intent, tenant=tenant)
    # Every credit has its payment row (reconciliation checks it), also for a payment begun outside the console.
    TopUp.objects.get_or_create(payment_intent_id=pi, defaults={"tenant": tenant, "amount_micros": amount})
    # Out of order: a late payment_failed never downgrades a succeeded top-up (see below).
    TopUp.objects.filter(payment_intent_id=pi).update(status=TopUpStatus.SUCCEEDED, completed_at=timezone.now())
    transaction.on_commit(
        lambda: topup_receipt_send(
            tenant_id=tenant.pk, tenant_name=tenant.name, payment_intent_id=pi, amount_micros=amount
        ),
        robust=True,
    )
    return "applied"


def _topup_link(intent: Any, *, tenant: Tenant) -> None:
    """A Checkout top-up learns its PaymentIntent id here (the intent did not exist when the row was made)."""
    topup_id = str((intent.get("metadata") or {}).get("topup_id") or "")
    if topup_id.isdigit():
        TopUp.objects.filter(pk=int(topup_id), tenant=tenant, payment_intent_id=None).update(
            payment_intent_id=intent["id"]
        )


def _payment_intent_failed(intent: Any) -> None:
    if (tenant := _tenant_of(intent)) is not None:
        _topup_link(intent, tenant=tenant)  # a Checkout top-up whose payment failed shows as failed, not pending
    TopUp.objects.filter(payment_intent_id=intent["id"], status=TopUpStatus.PENDING).update(
        status=TopUpStatus.FAILED, completed_at=timezone.now()
    )


def _invoice_paid(invoice: Any) -> None:
    """A postpaid tenant's invoice paid: what it owed comes back to its available balance."""
    tenant = _tenant_of(invoice)
    amount = int(invoice.get("amount_paid") or 0) * CENTS_TO_MICROS
    if tenant is None or amount <= 0:
        return
    key = f"invoice:{invoice['id']}"
    balance_topup(tenant=tenant, amount_micros=amount, idempotency_key=key, source="invoice", memo=_hosted_url(invoice))


def _hosted_url(invoice: Any) -> str:
    """Stripe's page for the tenant to view the invoice, kept in the credit's memo when it fits (an https URL)."""
    url = invoice.get("hosted_invoice_url") or ""
    return url if isinstance(url, str) and url.startswith("https://") and len(url) <= MEMO_MAX else ""


_HANDLERS: dict[str, Callable[[Any], str | None]] = {
    "payment_intent.succeeded": _payment_intent_succeeded,
    "payment_intent.payment_failed": _payment_intent_failed,
    "invoice.paid": _invoice_paid,
}
