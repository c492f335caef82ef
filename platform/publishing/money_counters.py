"""The gateway's money counters in Redis (spendable balance, month spend) are metering's: it computes them
from its ledger (``metering.gateway_counters``) and plugs them in here when Django starts (metering.apps).
Publishing decides when (an outbox row, startup, a Redis that came back empty) without importing metering.
"""

from __future__ import annotations

from typing import Protocol

from tenants.models import Tenant


class MoneyCounters(Protocol):
    def balance_ensure(self, *, tenant: Tenant) -> None:
        """The tenant's counters from the ledger where Redis has none (idempotent)."""

    def spend_counters_ensure(self, *, tenant: Tenant) -> None:
        """The month spend counters at least at the ledger's, before a limit checked against them."""

    def balance_adjust_once(self, *, tenant: Tenant, delta_micros: int, change_id: int) -> bool:
        """Move the spendable counter by ``delta_micros`` unless change ``change_id`` already did."""


_PLUGGED: list[MoneyCounters] = []


class NoMoneyCounters(RuntimeError):
    """No app plugged the money counters in (metering is not installed)."""


def money_counters_plug(counters: MoneyCounters) -> None:
    _PLUGGED[:] = [counters]


def money_counters() -> MoneyCounters:
    if not _PLUGGED:
        raise NoMoneyCounters("the gateway's money counters are not plugged in: is metering installed?")
    return _PLUGGED[0]


def balances_ensure_all() -> int:
    """Every tenant's counters, where Redis lost them (restart without persistence, first start)."""
    tenants = list(Tenant.objects.all())
    counters = money_counters()
    for tenant in tenants:
        counters.balance_ensure(tenant=tenant)
    return len(tenants)
