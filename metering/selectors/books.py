"""The operators' reconciliation of the books, from ledger balances: cash + credits = liability + spent.

Every journal's lines sum to zero, and the journals that move a tenant's money (top-ups, credits, usage,
refunds, disputes, shortfalls) touch only these accounts, so their balances sum to zero on their own:

    available + spent + stripe_clearing + promotions + hold_shortfall + reversal_shortfall = 0

which reads, with cash = −stripe_clearing, credits = −promotions and uncollected = −(both shortfalls):

    cash + credits = liability (Σ available) + spent (Σ tenant spent) − uncollected

Provider cost moves in journals of their own (provider_cost against provider_payable and provider_dispute),
so it is beside the identity: the ledger's margin is spent − provider cost; probe spend (probes call providers
directly and book nothing) is taken off on the dashboard, per window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Sum

from metering.models import AccountKind, Balance, JournalLine

DEMO_KEY_PREFIX = "demo:"  # metering.services.demo_credit_ensure keys the demo credit with it
DISPUTE_KEY_PREFIX = "provider_dispute:"  # metering.provider_truth keys each over-count claim with it
INVOICE_KEY_PREFIX = "provider_invoice:"  # metering.provider_invoices posts each invoice adjustment under this prefix
LINES_SHOWN = 50  # an account's drill-down: its latest lines


@dataclass(frozen=True)
class BooksFigure:
    """One figure of the reconciliation and the ledger account kinds it is read from (its drill-down)."""

    name: str
    micros: int
    kinds: tuple[str, ...]
    parts: list[tuple[str, int]] = field(default_factory=list)  # (name, micros) that add up to it


def _balances() -> dict[str, int]:
    rows = Balance.objects.values("account__kind").annotate(total=Sum("amount_micros"))
    return {row["account__kind"]: int(row["total"] or 0) for row in rows}


def _tenant_split(kind: str) -> tuple[int, int]:
    """(Σ positive, Σ negative) balances of a per-tenant account kind."""
    rows = Balance.objects.filter(account__kind=kind)
    positive = rows.filter(amount_micros__gt=0).aggregate(t=Sum("amount_micros"))["t"]
    negative = rows.filter(amount_micros__lt=0).aggregate(t=Sum("amount_micros"))["t"]
    return int(positive or 0), int(negative or 0)


def _lines_total(*, kind: str, key_prefix: str, start: datetime | None = None, end: datetime | None = None) -> int:
    """Σ of one account kind's lines in the journals whose key starts with the prefix (an indexed prefix),
    posted in [start, end) when given."""
    rows = JournalLine.objects.filter(account__kind=kind, journal__key__startswith=key_prefix)
    if start is not None:
        rows = rows.filter(created_at__gte=start)
    if end is not None:
        rows = rows.filter(created_at__lt=end)
    return int(rows.aggregate(total=Sum("amount_micros"))["total"] or 0)


def provider_cost_adjustments(*, start: datetime, end: datetime) -> dict[str, int]:
    """What moved provider cost in [start, end) beside usage: invoice imports (+ when a provider billed more
    than usage booked) and over-count disputes claimed back (a positive amount that lowers the cost)."""
    return {
        "invoice_adjustments_micros": _lines_total(
            kind=AccountKind.PROVIDER_COST, key_prefix=INVOICE_KEY_PREFIX, start=start, end=end
        ),
        "disputes_claimed_micros": _lines_total(
            kind=AccountKind.PROVIDER_DISPUTE, key_prefix=DISPUTE_KEY_PREFIX, start=start, end=end
        ),
    }


def books_reconciliation() -> dict[str, Any]:
    """Cash, credits, liability, spent, uncollected and provider cost with their parts, the ledger margin
    (spent − provider cost; probe spend is not in the ledger) and whether the identity holds
    (``difference_micros`` 0)."""
    b = _balances()
    demo = -_lines_total(kind=AccountKind.PROMOTIONS, key_prefix=DEMO_KEY_PREFIX)
    credits = -b.get(AccountKind.PROMOTIONS, 0)
    prepaid, owed = _tenant_split(AccountKind.AVAILABLE)
    hold_short, reversal_short = b.get(AccountKind.HOLD_SHORTFALL, 0), b.get(AccountKind.REVERSAL_SHORTFALL, 0)
    invoiced = _lines_total(kind=AccountKind.PROVIDER_COST, key_prefix=INVOICE_KEY_PREFIX)
    disputed = b.get(AccountKind.PROVIDER_DISPUTE, 0)
    provider_cost = b.get(AccountKind.PROVIDER_COST, 0)
    spent = b.get(AccountKind.SPENT, 0)
    figures = {
        "cash": BooksFigure("cash", -b.get(AccountKind.STRIPE_CLEARING, 0), (AccountKind.STRIPE_CLEARING,)),
        "credits": BooksFigure(
            "credits", credits, (AccountKind.PROMOTIONS,), [("demo", demo), ("promotions", credits - demo)]
        ),
        "liability": BooksFigure(
            "liability", prepaid + owed, (AccountKind.AVAILABLE,), [("prepaid", prepaid), ("postpaid_owed", owed)]
        ),
        "spent": BooksFigure("spent", spent, (AccountKind.SPENT,)),
        "uncollected": BooksFigure(
            "uncollected",
            -(hold_short + reversal_short),
            (AccountKind.HOLD_SHORTFALL, AccountKind.REVERSAL_SHORTFALL),
            [("hold_shortfall", -hold_short), ("reversal_shortfall", -reversal_short)],
        ),
        "provider_cost": BooksFigure(
            "provider_cost",
            provider_cost,
            (AccountKind.PROVIDER_COST,),
            [
                ("usage", provider_cost - invoiced + disputed),
                ("invoice_adjustments", invoiced),
                ("disputes_claimed", -disputed),
            ],
        ),
    }
    left = figures["cash"].micros + credits
    right = figures["liability"].micros + spent - figures["uncollected"].micros
    return {
        **figures,
        "margin_micros": spent - provider_cost,
        "left_micros": left,
        "right_micros": right,
        "difference_micros": left - right,
    }


def account_drilldown(*, kind: str, limit: int = LINES_SHOWN) -> dict[str, Any] | None:
    """One account kind: each account's balance (largest first) and the latest lines posted to it; None for
    a kind the ledger does not have."""
    if kind not in AccountKind.values:
        return None
    balances = (
        Balance.objects.filter(account__kind=kind).select_related("account__tenant").order_by("-amount_micros")[:limit]
    )
    lines = (
        JournalLine.objects.filter(account__kind=kind)
        .select_related("journal", "account__tenant")
        .order_by("-created_at", "-id")[:limit]
    )
    return {
        "kind": kind,
        "label": AccountKind(kind).label,
        "total_micros": int(Balance.objects.filter(account__kind=kind).aggregate(t=Sum("amount_micros"))["t"] or 0),
        "accounts": [
            {
                "tenant": b.account.tenant.slug if b.account.tenant else None,
                "tenant_id": b.account.tenant_id,
                "micros": b.amount_micros,
            }
            for b in balances
        ],
        "lines": [
            {
                "at": line.created_at,
                "key": line.journal.key,
                "journal_kind": line.journal.kind,
                "memo": line.journal.memo,
                "tenant": line.account.tenant.slug if line.account.tenant else None,
                "micros": line.amount_micros,
            }
            for line in lines
        ],
    }
