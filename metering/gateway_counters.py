"""The gateway's spendable-balance and month spend counters, from metering's ledger. Publishing calls them
(its outbox rows, startup) through ``publishing.money_counters``, where metering.apps plugs ``COUNTERS`` in.

Initialising is idempotent by itself (SET NX). A credit-limit change moves the counter by its difference
(INCRBY: a SET from the ledger would lose the holds and charges not yet ingested), which is not: the
outbox row's id is recorded in the same Lua call, so a row drained twice moves the counter once.
"""

from __future__ import annotations

from contracts import redis_keys
from foundation.redis_client import get_redis
from metering.services import month_spend_counters_ensure, tenant_available_ensure
from tenants.models import Tenant

APPLIED_TTL_S = 7 * 24 * 3600  # a row is retried for minutes, not days: a week of markers is ample
# KEYS: counter, applied marker. ARGV: delta, marker ttl. 1 = moved, 0 = counter missing, -1 = applied before.
ADJUST_ONCE = """
if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then return -1 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('INCRBY', KEYS[1], ARGV[1])
return 1
"""


def applied_marker(tenant_id: int, change_id: int) -> str:
    """In the tenant's hash tag: the script touches it and the counter together (one cluster slot)."""
    return f"{redis_keys.PREFIX}{redis_keys.tenant_tag(tenant_id)}:outbox:applied:{change_id}"


def balance_ensure(*, tenant: Tenant) -> None:
    tenant_available_ensure(tenant=tenant)
    month_spend_counters_ensure(tenant=tenant)


def spend_counters_ensure(*, tenant: Tenant) -> None:
    """Before a limit the gateway checks against them is published: the month spend counters at least
    at the ledger's (a missing one would read as nothing spent)."""
    month_spend_counters_ensure(tenant=tenant)


def balance_adjust_once(*, tenant: Tenant, delta_micros: int, change_id: int) -> bool:
    """Move the counter by ``delta_micros`` unless change ``change_id`` already did; True when it moved.
    A missing counter is initialised from the ledger instead, which already holds the change."""
    client = get_redis()
    moved = client.eval(
        ADJUST_ONCE,
        2,
        redis_keys.tenant_available(tenant.pk),
        applied_marker(tenant.pk, change_id),
        delta_micros,
        APPLIED_TTL_S,
    )
    tenant_available_ensure(tenant=tenant)
    return int(moved) == 1


class GatewayCounters:
    """``publishing.money_counters.MoneyCounters``, by metering."""

    balance_ensure = staticmethod(balance_ensure)
    spend_counters_ensure = staticmethod(spend_counters_ensure)
    balance_adjust_once = staticmethod(balance_adjust_once)


COUNTERS = GatewayCounters()
