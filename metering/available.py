"""The Redis ``avail`` counter: what a tenant may still reserve, kept beside the ledger.

``tenant_available(tid)`` in Redis = ledger available (+ credit limit, postpaid)
− open holds − charges settled by the gateway but not yet ingested. It is
initialised with SET NX, moved with INCRBY after each credit commits, and
corrected by reconciliation when a drift is stable.

This module sits under everything that moves money (credits, ingestion,
shortfalls, Stripe reversals, reconciliation) and imports only the ledger and
the holds, so each of them can call it from the top of its module.
"""

from __future__ import annotations

from contracts.redis_keys import (
    USAGE_GROUP,
    USAGE_STREAM,
    tenant_available,
    tenant_holds,
    usage_shard,
    usage_shard_count_from_env,
    usage_stream,
)
from foundation.redis_client import get_redis
from metering.holds import holds_open_micros
from metering.ledger import tenant_account_balance
from tenants.models import BillingMode, Tenant

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


def tenant_spendable_micros(*, tenant: Tenant) -> int:
    """What the tenant may spend by the ledger: available balance plus the credit limit when postpaid."""
    credit = tenant.credit_limit_micros if tenant.billing_mode == BillingMode.POSTPAID else 0
    return tenant_account_balance(tenant_id=tenant.pk) + credit


def tenant_available_ensure(*, tenant: Tenant) -> bool:
    """Initialise the Redis counter from the ledger when missing (SET NX: never overwrites)."""
    client = get_redis()
    value = tenant_spendable_micros(tenant=tenant) - holds_open_micros(client, tenant_id=tenant.pk)
    return bool(client.set(tenant_available(tenant.pk), value, nx=True))


def tenant_available_adjust(*, tenant: Tenant, delta_micros: int) -> None:
    """After a credit commits: INCRBY, or initialise from the (already credited) ledger when missing."""
    client = get_redis()
    if not tenant_available_ensure(tenant=tenant):
        client.incrby(tenant_available(tenant.pk), delta_micros)


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
    stream = usage_stream(usage_shard(tenant.pk, usage_shard_count_from_env()))
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
