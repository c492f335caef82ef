"""A tenant's billing page: balance, top-ups, spend alerts, notifications, invoices."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery, Sum

from metering.ledger import tenant_account_balance
from metering.models import (
    AccountKind,
    Journal,
    JournalLine,
    Notification,
    PaymentReversal,
    ReversalKind,
    SpendAlert,
    TopUp,
)

INVOICE_JOURNAL_KIND = "credit_invoice"  # what balance_topup(source="invoice") posts for a paid Stripe invoice
INVOICE_KEY_PREFIX = "invoice:"  # webhooks key invoice credits by the Stripe invoice id
TOPUPS_SHOWN = 20  # the billing page's top-up history: a year and more of monthly top-ups
NOTIFICATIONS_SHOWN = 10
INVOICES_SHOWN = 24  # two years of monthly invoices


def tenant_balance_micros(*, tenant_id: int) -> int:
    """The tenant's available ledger balance (negative = owed, postpaid)."""
    return tenant_account_balance(tenant_id=tenant_id)


def tenant_topups(*, tenant_id: int, limit: int = TOPUPS_SHOWN) -> QuerySet[TopUp]:
    return TopUp.objects.filter(tenant_id=tenant_id).order_by("-created_at", "-pk")[:limit]


REFUND_TAKEN = frozenset({"succeeded", "pending", "requires_action"})  # Stripe is returning the money
DISPUTE_OPEN = frozenset({"needs_response", "under_review", "warning_needs_response", "warning_under_review"})


@dataclass(frozen=True)
class TopUpShown:
    """A top-up as the tenant should read it: its payment's state after refunds and disputes.

    ``state``: pending | failed | succeeded | partly_refunded | refunded | disputed | dispute_lost | dispute_won.
    """

    id: int
    created_at: Any
    amount_micros: int
    status: str  # the payment's own status (TopUp.status)
    state: str
    refunded_micros: int = 0
    disputed_micros: int = 0


def _topup_state(topup: TopUp, reversals: list[PaymentReversal]) -> TopUpShown:
    refunds = [r for r in reversals if r.kind == ReversalKind.REFUND and r.status in REFUND_TAKEN]
    disputes = [r for r in reversals if r.kind == ReversalKind.DISPUTE]
    refunded = sum(r.amount_micros for r in refunds)
    state = topup.status
    if topup.status == "succeeded":
        if any(d.status == "lost" for d in disputes):
            state = "dispute_lost"
        elif any(d.status in DISPUTE_OPEN for d in disputes):
            state = "disputed"
        elif refunded >= topup.amount_micros:
            state = "refunded"
        elif refunded:
            state = "partly_refunded"
        elif any(d.status == "won" for d in disputes):
            state = "dispute_won"
    return TopUpShown(
        id=topup.pk,
        created_at=topup.created_at,
        amount_micros=topup.amount_micros,
        status=topup.status,
        state=state,
        refunded_micros=refunded,
        disputed_micros=sum(d.amount_micros for d in disputes),
    )


def tenant_topups_shown(*, tenant_id: int, limit: int = TOPUPS_SHOWN) -> list[TopUpShown]:
    """The recent top-ups with their refunds and disputes folded in (a refunded payment never reads
    "Succeeded"): one query for the top-ups, one for their reversals."""
    topups = list(tenant_topups(tenant_id=tenant_id, limit=limit))
    intents = [t.payment_intent_id for t in topups if t.payment_intent_id]
    by_intent: dict[str, list[PaymentReversal]] = {}
    for reversal in PaymentReversal.objects.filter(payment_intent_id__in=intents).order_by("created_at"):
        by_intent.setdefault(reversal.payment_intent_id, []).append(reversal)
    return [_topup_state(t, by_intent.get(t.payment_intent_id or "", [])) for t in topups]


def tenant_topup_get(*, tenant_id: int, topup_id: int) -> TopUp | None:
    """One top-up of the tenant; another tenant's id is None like an unknown one."""
    return TopUp.objects.filter(tenant_id=tenant_id, pk=topup_id).first()


def tenant_spend_alerts(*, tenant_id: int) -> QuerySet[SpendAlert]:
    return SpendAlert.objects.filter(tenant_id=tenant_id).order_by("threshold_micros", "pk")


def tenant_notifications(*, tenant_id: int, limit: int = NOTIFICATIONS_SHOWN) -> QuerySet[Notification]:
    return Notification.objects.filter(tenant_id=tenant_id).order_by("-created_at", "-pk")[:limit]


def tenant_invoices(*, tenant_id: int, limit: int = INVOICES_SHOWN) -> list[dict[str, Any]]:
    """Paid Stripe invoices (postpaid tenants), newest first, from the ledger credits their payment posted:
    number (Stripe's invoice id), amount_micros, status, paid_at, url (Stripe's hosted page when it sent one)."""
    # A subquery, not a join with GROUP BY: the journal's key is (id, created_at) (monthly partitions), so
    # PostgreSQL would not accept grouping by id alone; the created_at match also prunes the lines' months.
    credited = Subquery(
        JournalLine.objects.filter(
            journal_id=OuterRef("pk"), created_at=OuterRef("created_at"), account__kind=AccountKind.AVAILABLE
        )
        .values("journal_id")
        .annotate(total=Sum("amount_micros"))
        .values("total")
    )
    rows = (
        Journal.objects.filter(tenant_id=tenant_id, kind=INVOICE_JOURNAL_KIND)
        .annotate(amount=credited)
        .order_by("-created_at", "-pk")[:limit]
    )
    return [
        {"number": j.key.removeprefix(INVOICE_KEY_PREFIX), "amount_micros": int(j.amount or 0), "status": "paid",
         "paid_at": j.created_at, "url": j.memo if j.memo.startswith("https://") else None}
        for j in rows
    ]  # fmt: skip


# --- Operators' money view: cash moved, liabilities, Stripe sync per tenant (ops dashboard) -----------
