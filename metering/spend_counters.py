"""The gateway's month spend counters (each key's, the tenant's), seeded from the ledger.

Admission checks a key's monthly budget and the tenant's monthly spend limit against these
counters plus every open hold (routing/limits/admission.lua); settlement adds each charge to
them. They are kept beside the ledger like ``avail`` (metering.available): what the ledger
booked this month (UTC) plus charges settled by the gateway but not yet ingested.

Seeding raises a counter to the ledger's amount and never lowers it. Race: a counter ahead of
the ledger holds charges not yet ingested (a SET from the ledger would forget them and let the
tenant spend them again); one behind it lost its value (Redis came back empty and a settlement
recreated it before the republish). Raising, in one script over the tenant's keys (one cluster
slot), keeps the first and repairs the second.
"""

from __future__ import annotations

from datetime import UTC, datetime

from contracts.redis_keys import MONTH_SPEND_TTL_S, key_month_spend, tenant_month_spend
from foundation.redis_client import get_redis
from metering.alerts import month_spend_by_key
from tenants.models import Tenant

# KEYS: counters. ARGV: 1 ttl, then the ledger's amount for each counter, in order.
_RAISE = """
local raised = 0
for i, key in ipairs(KEYS) do
  local amount = tonumber(ARGV[i + 1])
  if tonumber(redis.call('GET', key) or '-1') < amount then
    redis.call('SET', key, amount, 'EX', tonumber(ARGV[1]))
    raised = raised + 1
  end
end
return raised
"""


def month_spend_counters_ensure(*, tenant: Tenant, now: datetime | None = None) -> int:
    """Raise the tenant's and its keys' month spend counters to the ledger's; returns how many moved."""
    now = now or datetime.now(tz=UTC)
    month = now.strftime("%Y%m")
    by_key = month_spend_by_key(tenant_id=tenant.pk, now=now)
    keys = [tenant_month_spend(tenant.pk, month)] + [key_month_spend(tenant.pk, kid, month) for kid in by_key]
    amounts = [sum(by_key.values()), *by_key.values()]
    return int(get_redis().eval(_RAISE, len(keys), *keys, MONTH_SPEND_TTL_S, *amounts))
