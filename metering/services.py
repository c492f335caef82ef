"""Balance services: credits (top-ups, demo, invoice payments) and spend alerts.

A credit posts to the ledger and, once committed, moves the Redis ``avail``
counter (``metering.available``) and pushes the new balance to open consoles.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from metering.available import tenant_available_adjust
from metering.available import tenant_available_ensure as tenant_available_ensure  # re-exported: a public entry
from metering.available import tenant_spendable_micros as tenant_spendable_micros  # re-exported: callers read it
from metering.console_push import tenant_push
from metering.ledger import JournalSpec, journals_post, tenant_account_balance
from metering.models import AccountKind, SpendAlert
from metering.spend_counters import month_spend_counters_ensure as month_spend_counters_ensure  # re-exported
from tenants.models import Tenant

logger = logging.getLogger(__name__)

DEMO_CREDIT_MICROS = 50_000_000  # $50
CREDIT_SOURCES = {
    "stripe": AccountKind.STRIPE_CLEARING,
    "invoice": AccountKind.STRIPE_CLEARING,
    "demo": AccountKind.PROMOTIONS,
    "promotion": AccountKind.PROMOTIONS,
}


class TopUpError(ValueError):
    """A credit that cannot be applied (non-positive amount, unknown source)."""


def balance_topup(*, tenant: Tenant, amount_micros: int, idempotency_key: str, source: str, memo: str = "") -> bool:
    """Credit the tenant's available balance once per idempotency key; True when this call applied it.

    Joins the caller's transaction when there is one (the webhook writes its
    dedupe row in the same transaction); Redis moves only after the commit.
    """
    if amount_micros <= 0:
        raise TopUpError("amount_micros must be positive")
    if source not in CREDIT_SOURCES:
        raise TopUpError(f"unknown credit source {source!r}")
    spec = JournalSpec(
        key=idempotency_key,
        kind=f"credit_{source}",
        tenant_id=tenant.pk,
        lines=[((tenant.pk, AccountKind.AVAILABLE), amount_micros), ((None, CREDIT_SOURCES[source]), -amount_micros)],
        memo=memo,
    )
    with transaction.atomic():
        posted = journals_post(specs=[spec], at=timezone.now())
        if posted:
            transaction.on_commit(lambda: tenant_available_adjust(tenant=tenant, delta_micros=amount_micros))
            transaction.on_commit(lambda: _credit_pushed_live(tenant=tenant))
    return bool(posted)


class SpendAlertError(ValueError):
    """A spend alert that cannot be added (threshold not positive)."""


def spend_alert_add(*, tenant: Tenant, threshold_micros: int, email: str = "") -> SpendAlert:
    """Watch this month's spend; ``metering.alerts.spend_alerts_check`` fires it once a month when crossed."""
    if threshold_micros <= 0:
        raise SpendAlertError("threshold_micros must be positive")
    return SpendAlert.objects.create(tenant=tenant, threshold_micros=threshold_micros, email=email)


def spend_alert_remove(*, tenant: Tenant, alert_id: int) -> bool:
    """Delete one of the tenant's alerts; another tenant's id removes nothing. True when one was removed."""
    deleted, _ = SpendAlert.objects.filter(tenant=tenant, pk=alert_id).delete()
    return bool(deleted)


def _credit_pushed_live(*, tenant: Tenant) -> None:
    """Open consoles show the new balance at once (same message as after usage ingestion)."""
    payload: dict[str, object] = {
        "balance_micros": tenant_account_balance(tenant_id=tenant.pk),
        "usage": {"requests": 0, "charge_micros": 0},
        "request_ids": [],
    }
    tenant_push(tenant_id=tenant.pk, payload=payload)


def demo_credit_ensure(tenant: Tenant) -> bool:
    """Credit the demo tenant $50 once (idempotent across runs of seed_demo)."""
    tenant_available_ensure(tenant=tenant)
    return balance_topup(
        tenant=tenant, amount_micros=DEMO_CREDIT_MICROS, idempotency_key=f"demo:{tenant.pk}", source="demo"
    )
