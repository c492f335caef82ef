"""Balance services: credits (top-ups, demo, invoice payments) and the Redis ``avail`` counter.

``tenant_available(tid)`` in Redis = ledger available (+ credit limit, postpaid)
− open holds − charges settled by the gateway but not yet ingested. It is
initialised with SET NX, moved with INCRBY after each credit commits, and
corrected by reconciliation when a drift is stable.
"""

from __future__ import annotations

import logging
import os

from django.db import transaction
from django.utils import timezone

from contracts.redis_keys import (
    USAGE_GROUP,
    USAGE_STREAM,
    tenant_available,
    tenant_holds,
    usage_shard,
    usage_shard_count,
    usage_stream,
)
from metering.ledger import JournalSpec, journals_post, tenant_account_balance
from metering.models import AccountKind, SpendAlert
from tenants.models import BillingMode, Tenant
from tokenway.redis_client import get_redis

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
    from metering.ledger import tenant_account_balance
    from metering.live import tenant_push

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


def tenant_spendable_micros(*, tenant: Tenant) -> int:
    """What the tenant may spend by the ledger: available balance plus the credit limit when postpaid."""
    credit = tenant.credit_limit_micros if tenant.billing_mode == BillingMode.POSTPAID else 0
    return tenant_account_balance(tenant_id=tenant.pk) + credit


def tenant_available_ensure(*, tenant: Tenant) -> bool:
    """Initialise the Redis counter from the ledger when missing (SET NX: never overwrites)."""
    from metering.holds import holds_open_micros

    client = get_redis()
    value = tenant_spendable_micros(tenant=tenant) - holds_open_micros(client, tenant_id=tenant.pk)
    return bool(client.set(tenant_available(tenant.pk), value, nx=True))


def tenant_available_adjust(*, tenant: Tenant, delta_micros: int) -> None:
    """After a credit commits: INCRBY, or initialise from the (already credited) ledger when missing."""
    client = get_redis()
    if not tenant_available_ensure(tenant=tenant):
        client.incrby(tenant_available(tenant.pk), delta_micros)


# KEYS: avail, holds (one tenant: one cluster slot). ARGV: ledger spendable, drift to apply ("none": measure only).
# Applies only when the drift measured now, atomically with the holds, is the one expected.
_AVAIL_CORRECT = """
local held = 0
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do held = held + tonumber(v) end
local drift = tonumber(ARGV[1]) - held - tonumber(redis.call('GET', KEYS[1]) or '0')
if drift ~= 0 and tostring(drift) == ARGV[2] then
  redis.call('INCRBY', KEYS[1], drift)
  return {1, drift}
end
return {0, drift}
"""
# How long a drift observation is remembered for the next reconciliation run.
DRIFT_MEMORY_S = 3600


def stream_idle_last_id(stream: str = USAGE_STREAM) -> str | None:
    """The stream's last id when the metering group has read and acked everything, else None."""
    client = get_redis()
    if not client.exists(stream):
        return "0-0"
    info = client.xinfo_stream(stream)
    last = _text(info["last-generated-id"])
    for group in client.xinfo_groups(stream):
        if _text(group["name"]) == USAGE_GROUP:
            idle = group["pending"] == 0 and _text(group["last-delivered-id"]) == last
            return last if idle else None
    return None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def tenant_available_correct(*, tenant: Tenant) -> tuple[int, bool] | None:
    """Compare avail with the ledger; fix a drift seen twice in a row. None = ingestion busy, skipped.

    Race: between the gateway's settle and its XADD, avail is legitimately ahead of the ledger.
    The tenant's shard stream must be idle (everything acked) before the ledger is read and
    still at the same id after the drift is measured, and the drift must equal the one seen by
    the last run; the script then applies it only if it is still that drift. The stream and the
    tenant's keys are in different cluster slots, so the stream is checked around the script.
    """
    client = get_redis()
    stream = usage_stream(usage_shard(tenant.pk, usage_shard_count(os.environ)))
    last = stream_idle_last_id(stream)
    if last is None or last == "0-0":
        return None
    spendable = tenant_spendable_micros(tenant=tenant)
    keys = [tenant_available(tenant.pk), tenant_holds(tenant.pk)]
    _, drift = client.eval(_AVAIL_CORRECT, 2, *keys, spendable, "none")
    if stream_idle_last_id(stream) != last:
        return None
    memory = f"tw:recon:drift:{tenant.pk}"
    seen = client.get(memory)
    applied = False
    if seen is not None and drift and _text(seen) == str(drift):
        applied, drift = client.eval(_AVAIL_CORRECT, 2, *keys, spendable, str(drift))
    if applied or not drift:
        client.delete(memory)
    else:
        client.set(memory, drift, ex=DRIFT_MEMORY_S)
    return int(drift), bool(applied)
