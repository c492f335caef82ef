"""Refunds and disputes of Stripe payments through the ledger, each applied once per Stripe object id.

Stripe reports one refund or dispute in several events (``charge.refunded`` lists the charge's refunds,
``refund.created``/``refund.updated`` carry one, a dispute moves from created to closed and withdraws or
reinstates funds). The money moves in journals keyed by the Stripe object id, so however many events
arrive, in whatever order, each movement is booked once:

- ``refund:<re_id>``: tenant available −amount, Stripe clearing +amount (a refund pending or succeeded);
- ``refund:<re_id>:reversed``: that journal negated (the refund later failed or was canceled);
- ``dispute:<dp_id>:withdrawn``: like a refund (funds withdrawn; inquiries ``warning_*`` withdraw nothing);
- ``dispute:<dp_id>:reinstated``: the withdrawal negated (dispute won, funds reinstated).

A reversal takes back at most what remains of its payment (its credit less the refunds and withdrawals
already booked): a refund Stripe reports larger than that is booked capped and the rest is an error finding
(``refund_over_payment``), never taken from the tenant.

A prepaid balance stops at zero (PostgreSQL refuses lower, migration 0004): what the tenant had already
spent goes to the platform's ``reversal_shortfall`` account. A ``PaymentReversal`` row keeps each object's
last status; reconciliation compares it with the journals.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from metering.available import tenant_available_adjust
from metering.ledger import AccountRef, JournalSpec, balances_lock, journals_post
from metering.models import (
    AccountKind,
    Journal,
    JournalLine,
    PaymentReversal,
    ReconciliationFinding,
    ReversalKind,
    TopUp,
)
from metering.money import cents_to_micros
from metering.stripe.client import refunds_list
from tenants.models import BillingMode, Tenant

logger = logging.getLogger(__name__)

CLEARING: AccountRef = (None, AccountKind.STRIPE_CLEARING)
SHORTFALL: AccountRef = (None, AccountKind.REVERSAL_SHORTFALL)
REFUND_DEBITED = frozenset({"succeeded", "pending", "requires_action"})  # Stripe is returning the money
REFUND_UNDONE = frozenset({"failed", "canceled"})
# Final statuses: a late event with an older status never overwrites them.
FINAL = frozenset({"failed", "canceled", "won", "lost", "warning_closed"})


OVER_PAYMENT = "refund_over_payment"  # the finding: a reversal larger than what remained of its payment


def refund_key(refund_id: str) -> str:
    return f"refund:{refund_id}"


def dispute_key(dispute_id: str) -> str:
    return f"dispute:{dispute_id}:withdrawn"


def _payment_tenant(*, payment_intent: str, customer: str) -> Tenant | None:
    """The tenant a payment credited: its top-up, else its credit journal, else its Stripe customer."""
    if payment_intent:
        topup = TopUp.objects.filter(payment_intent_id=payment_intent).select_related("tenant").first()
        if topup is not None:
            return topup.tenant
        journal = Journal.objects.filter(key=f"topup:{payment_intent}").exclude(tenant=None).first()
        if journal is not None and journal.tenant_id is not None:
            return Tenant.objects.filter(pk=journal.tenant_id).first()
    return Tenant.objects.filter(stripe_customer_id=customer).first() if customer else None


def _reversal_lock(*, kind: str, obj: dict[str, Any], tenant: Tenant | None) -> PaymentReversal:
    """The object's row, created or moved to the event's status, and locked.

    Race: Stripe sends several events about one refund or dispute, possibly at once and out of order; the
    row lock makes them apply one after the other, and a final status is never overwritten by a stale one.
    """
    row, _ = PaymentReversal.objects.get_or_create(
        stripe_id=obj["id"],
        defaults={"kind": kind, "tenant": tenant, "payment_intent_id": str(obj.get("payment_intent") or ""),
                  "charge_id": str(obj.get("charge") or ""), "amount_micros": cents_to_micros(obj.get("amount")),
                  "status": str(obj.get("status") or "")},
    )  # fmt: skip
    row = PaymentReversal.objects.select_for_update().get(pk=row.pk)
    status = str(obj.get("status") or "")
    if status and status != row.status and row.status not in FINAL:
        row.status = status
        row.save(update_fields=["status", "updated_at"])
    return row


def reversal_debit(*, tenant: Tenant, key: str, kind: str, amount_micros: int) -> bool:
    """Take money back from the tenant once per key; a prepaid balance gives at most what it holds."""
    available: AccountRef = (tenant.pk, AccountKind.AVAILABLE)
    with transaction.atomic():
        balances = balances_lock(refs={available, CLEARING, SHORTFALL})
        postpaid = tenant.billing_mode == BillingMode.POSTPAID
        taken = amount_micros if postpaid else max(0, min(amount_micros, balances[available]))
        lines = [(available, -taken), (CLEARING, amount_micros), (SHORTFALL, taken - amount_micros)]
        spec = JournalSpec(key=key, kind=kind, tenant_id=tenant.pk, lines=lines)
        posted = journals_post(specs=[spec], at=timezone.now())
        if posted:
            transaction.on_commit(lambda: tenant_available_adjust(tenant=tenant, delta_micros=-taken))
    if posted and taken < amount_micros:
        logger.warning("%s: tenant %d had spent %d of it", key, tenant.pk, amount_micros - taken)
    return bool(posted)


def _reversal_keys(stripe_id: str) -> list[str]:
    return [refund_key(stripe_id), f"{refund_key(stripe_id)}:reversed", dispute_key(stripe_id),
            f"dispute:{stripe_id}:reinstated"]  # fmt: skip


def payment_refundable_micros(*, payment_intent: str, exclude: str = "") -> int | None:
    """What of a payment has not been taken back yet: its credit less every refund and withdrawal booked for it
    (their reversals added back). None when the payment's credit is not in our books (nothing to cap by).

    Race: two refunds of one payment applied at once would each see the whole payment left; the payment's row
    lock (its TopUp) orders them, so the second reads the first's journal. Inside a transaction.
    """
    if not payment_intent:
        return None
    list(TopUp.objects.select_for_update().filter(payment_intent_id=payment_intent).values_list("pk"))
    credited = _clearing_sum([f"topup:{payment_intent}"])
    if credited == 0:
        return None
    others = PaymentReversal.objects.filter(payment_intent_id=payment_intent).exclude(stripe_id=exclude)
    keys = [key for stripe_id in others.values_list("stripe_id", flat=True) for key in _reversal_keys(stripe_id)]
    return max(0, -credited - _clearing_sum(keys))


def _clearing_sum(keys: list[str]) -> int:
    """Σ of the Stripe clearing lines of these journals (a credit is negative there, a refund positive)."""
    lines = JournalLine.objects.filter(journal__key__in=keys, account__kind=AccountKind.STRIPE_CLEARING)
    return int(lines.aggregate(total=Sum("amount_micros"))["total"] or 0)


def reversal_debit_capped(*, tenant: Tenant, row: PaymentReversal, key: str, kind: str) -> bool:
    """``reversal_debit`` of the reversal's amount, capped by what remains of its payment; the rest is flagged."""
    refundable = payment_refundable_micros(payment_intent=row.payment_intent_id, exclude=row.stripe_id)
    amount = row.amount_micros if refundable is None else min(row.amount_micros, refundable)
    posted = reversal_debit(tenant=tenant, key=key, kind=kind, amount_micros=amount)
    if posted and amount < row.amount_micros:
        excess = row.amount_micros - amount
        ReconciliationFinding.objects.create(
            run_at=timezone.now(), check_name=OVER_PAYMENT, severity="error", subject=key[:200],
            detail={"tenant_id": tenant.pk, "payment_intent": row.payment_intent_id, "reported_micros":
                    row.amount_micros, "booked_micros": amount, "excess_micros": excess},
        )  # fmt: skip
        logger.error("%s: %d beyond what remained of payment %s, not booked", key, excess, row.payment_intent_id)
    return posted


def journal_reverse(*, tenant: Tenant, key: str, reverse_key: str, kind: str) -> bool:
    """Post the negation of journal ``key`` once (nothing when it was never posted)."""
    lines: list[tuple[AccountRef, int]] = [
        ((line.account.tenant_id, line.account.kind), -line.amount_micros)
        for line in JournalLine.objects.filter(journal__key=key).select_related("account")
    ]
    if not lines:
        return False
    available: AccountRef = (tenant.pk, AccountKind.AVAILABLE)
    restored = sum(amount for ref, amount in lines if ref == available)
    with transaction.atomic():
        balances_lock(refs={ref for ref, _ in lines})
        spec = JournalSpec(key=reverse_key, kind=kind, tenant_id=tenant.pk, lines=lines)
        posted = journals_post(specs=[spec], at=timezone.now())
        if posted:
            transaction.on_commit(lambda: tenant_available_adjust(tenant=tenant, delta_micros=restored))
    return bool(posted)


def _outcome(posted: bool) -> str:
    return "applied" if posted else "duplicate"


def refund_apply(*, refund: dict[str, Any], charge: dict[str, Any] | None = None) -> str:
    """One refund (from any event that carries it): debit while Stripe returns the money, undo if it fails."""
    source = charge or refund
    payment_intent = str(refund.get("payment_intent") or source.get("payment_intent") or "")
    tenant = _payment_tenant(payment_intent=payment_intent, customer=str(source.get("customer") or ""))
    row = _reversal_lock(kind=ReversalKind.REFUND, obj={**refund, "payment_intent": payment_intent}, tenant=tenant)
    if tenant is None:
        logger.error("refund %s: no tenant for payment %r", row.stripe_id, payment_intent)
        return "unattributed"
    key = refund_key(row.stripe_id)
    if row.status in REFUND_DEBITED:
        return _outcome(reversal_debit_capped(tenant=tenant, row=row, key=key, kind="refund"))
    if row.status in REFUND_UNDONE:
        reversed_ = journal_reverse(tenant=tenant, key=key, reverse_key=f"{key}:reversed", kind="refund_reversed")
        return "applied" if reversed_ else "ignored"
    return "ignored"


def _charge_refunded(charge: dict[str, Any]) -> str:
    outcomes = [refund_apply(refund=refund, charge=charge) for refund in _charge_refunds(charge)]
    if "applied" in outcomes:
        return "applied"
    return "duplicate" if "duplicate" in outcomes else "ignored"


def _charge_refunds(charge: dict[str, Any]) -> list[dict[str, Any]]:
    """The refunds the event lists; Stripe's own list when it omits them (API versions since 2022-11-15)."""
    listed = charge.get("refunds")
    if isinstance(listed, dict) and isinstance(listed.get("data"), list) and not listed.get("has_more"):
        return [refund for refund in listed["data"] if isinstance(refund, dict) and isinstance(refund.get("id"), str)]
    return refunds_list(charge_id=charge["id"])


def _refund_event(refund: dict[str, Any]) -> str:
    return refund_apply(refund=refund)


def _dispute_row(dispute: dict[str, Any]) -> tuple[PaymentReversal, Tenant | None]:
    payment_intent = str(dispute.get("payment_intent") or "")
    tenant = _payment_tenant(payment_intent=payment_intent, customer=str(dispute.get("customer") or ""))
    return _reversal_lock(kind=ReversalKind.DISPUTE, obj=dispute, tenant=tenant), tenant


def _dispute_withdraw(row: PaymentReversal, tenant: Tenant) -> str:
    if row.status == "won" or row.status.startswith("warning_"):  # won: reinstated; inquiry: nothing withdrawn
        return "ignored"
    key = dispute_key(row.stripe_id)
    return _outcome(reversal_debit_capped(tenant=tenant, row=row, key=key, kind="dispute"))


def _dispute_reinstate(row: PaymentReversal, tenant: Tenant) -> str:
    key = dispute_key(row.stripe_id)
    reinstated = journal_reverse(
        tenant=tenant, key=key, reverse_key=f"dispute:{row.stripe_id}:reinstated", kind="dispute_reinstated"
    )
    return "applied" if reinstated else "ignored"


def _dispute_event(action: str) -> Callable[[dict[str, Any]], str]:
    def handle(dispute: dict[str, Any]) -> str:
        row, tenant = _dispute_row(dispute)
        if tenant is None:
            logger.error("dispute %s: no tenant for payment %r", row.stripe_id, row.payment_intent_id)
            return "unattributed"
        if action == "closed":
            action_now = {"won": "reinstate", "lost": "withdraw"}.get(row.status, "record")
        else:
            action_now = action
        if action_now == "withdraw":
            return _dispute_withdraw(row, tenant)
        if action_now == "reinstate":
            return _dispute_reinstate(row, tenant)
        return "ignored"

    return handle


def reversal_missing_keys(row: PaymentReversal, *, posted: set[str]) -> list[str]:
    """The journals a refund or dispute in its last status should have posted and has not (reconciliation)."""
    if row.kind == ReversalKind.REFUND:
        key = refund_key(row.stripe_id)
        undo = f"{key}:reversed"
        expected = {key} if row.status in REFUND_DEBITED else ({undo} if key in posted else set())
    else:
        key = dispute_key(row.stripe_id)
        undo = f"dispute:{row.stripe_id}:reinstated"
        expected = {key} if row.status == "lost" else ({undo} if row.status == "won" and key in posted else set())
    return sorted(expected - posted)


LIFECYCLE_HANDLERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "charge.refunded": _charge_refunded,
    "refund.created": _refund_event,
    "refund.updated": _refund_event,
    "refund.failed": _refund_event,
    "charge.refund.updated": _refund_event,
    "charge.dispute.created": _dispute_event("withdraw"),
    "charge.dispute.funds_withdrawn": _dispute_event("withdraw"),
    "charge.dispute.funds_reinstated": _dispute_event("reinstate"),
    "charge.dispute.closed": _dispute_event("closed"),
    "charge.dispute.updated": _dispute_event("record"),
}
