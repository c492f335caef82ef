"""Settlement beyond a hold: what a prepaid balance cannot pay is booked to the platform's hold shortfall account.

Holds cover the worst case (``contracts.pricing.worst_case_cost_micros``), so a charge above a prepaid
balance must not happen. When it does, the tenant's balance stops at zero (PostgreSQL refuses lower:
migration 0004), the rest is booked to ``AccountKind.HOLD_SHORTFALL`` (its balance is minus the total never
collected), an error finding is stored for operators and the error is logged. Postpaid tenants owe what
they used and are billed for it, so their usage is never clamped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from metering.available import tenant_available_adjust
from metering.ledger import AccountRef, JournalSpec, balances_lock
from metering.models import AccountKind, ReconciliationFinding
from tenants.models import Tenant

logger = logging.getLogger(__name__)

SHORTFALL: AccountRef = (None, AccountKind.HOLD_SHORTFALL)
FINDING = "hold_shortfall"


@dataclass(frozen=True)
class Shortfall:
    journal_key: str
    tenant_id: int
    charge_micros: int
    paid_micros: int

    @property
    def amount_micros(self) -> int:
        return self.charge_micros - self.paid_micros


def usage_journals_clamp(*, specs: list[JournalSpec], prepaid: set[int]) -> list[Shortfall]:
    """Rewrite (in place) the usage journals a prepaid balance cannot pay in full; the caller posts them.

    Must run in the transaction that posts the journals: the balances read here stay locked until then.
    """
    charged = [spec for spec in specs if spec.tenant_id in prepaid]
    if not charged:
        return []
    refs = {ref for spec in specs for ref, _ in spec.lines} | {SHORTFALL}
    balances = balances_lock(refs=refs)
    room = {spec.tenant_id: max(0, balances[(spec.tenant_id, AccountKind.AVAILABLE)]) for spec in charged}
    shortfalls = []
    for spec in charged:
        shortfall = _clamp(spec, room)
        if shortfall is not None:
            shortfalls.append(shortfall)
    return shortfalls


def _clamp(spec: JournalSpec, room: dict[int | None, int]) -> Shortfall | None:
    tenant_id = spec.tenant_id
    assert tenant_id is not None  # only tenants' usage journals reach here
    available = (tenant_id, AccountKind.AVAILABLE)
    charge = -sum(amount for ref, amount in spec.lines if ref == available)
    paid = max(0, min(charge, room[tenant_id]))
    room[tenant_id] -= paid
    if paid >= charge:
        return None
    lines = [(ref, amount) for ref, amount in spec.lines if ref != available]
    spec.lines = [(available, -paid), (SHORTFALL, paid - charge), *lines]
    return Shortfall(journal_key=spec.key, tenant_id=tenant_id, charge_micros=charge, paid_micros=paid)


def shortfalls_record(*, shortfalls: list[Shortfall], tenants: dict[int, Tenant], at: datetime) -> None:
    """Store a finding per shortfall (same transaction) and, after commit, give the gateway's counter back
    what the ledger did not take (it settled the full charge)."""
    if not shortfalls:
        return
    ReconciliationFinding.objects.bulk_create(
        [
            ReconciliationFinding(run_at=at, check_name=FINDING, severity="error", subject=s.journal_key[:200],
                                  detail={"tenant_id": s.tenant_id, "charge_micros": s.charge_micros,
                                          "paid_micros": s.paid_micros, "shortfall_micros": s.amount_micros})
            for s in shortfalls
        ]
    )  # fmt: skip
    for s in shortfalls:
        logger.error(
            "hold shortfall: %s charged %d beyond tenant %d's balance", s.journal_key, s.amount_micros, s.tenant_id
        )
        transaction.on_commit(_counter_return(tenants[s.tenant_id], s.amount_micros))


def _counter_return(tenant: Tenant, amount_micros: int) -> Callable[[], None]:
    return lambda: tenant_available_adjust(tenant=tenant, delta_micros=amount_micros)
