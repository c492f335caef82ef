"""What is left of a key's monthly budget and of the tenant's monthly spend limit, as admission sees it.

Admission (routing/limits/admission.lua) refuses a call when settled spend + every open hold + its own
hold would pass the limit. The same sum is shown here: spend is the larger of the ledger's month and the
gateway's month counter (the counter is ahead by the charges settled but not yet ingested), and the open
holds are the gateway's held counters. Read from Redis in one pipelined round trip; without Redis the
ledger alone is shown (and no hold), which can only overstate what is left by the calls in flight.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import redis

from contracts import redis_keys as rk
from foundation.redis_client import get_redis
from metering.alerts import month_spend_by_key

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MonthlyLimit:
    limit_micros: int | None  # None: no limit
    spent_micros: int  # settled this month
    held_micros: int  # open holds that may still be charged

    @property
    def remaining_micros(self) -> int | None:
        if self.limit_micros is None:
            return None
        return max(0, self.limit_micros - self.spent_micros - self.held_micros)


def spend_limits_left(
    *,
    tenant_id: int,
    tenant_limit_micros: int | None,
    key_budgets: Mapping[int, int | None],
    now: datetime | None = None,
) -> tuple[MonthlyLimit, dict[int, MonthlyLimit]]:
    """The tenant's monthly spend limit and each given key's monthly budget (key id -> budget)."""
    now = now or datetime.now(tz=UTC)
    ledger = month_spend_by_key(tenant_id=tenant_id, now=now)
    counted = _counters(tenant_id, list(key_budgets), now.strftime("%Y%m"))
    tenant = MonthlyLimit(
        tenant_limit_micros, max(sum(ledger.values()), counted["tenant_spent"]), counted["tenant_held"]
    )
    keys = {
        kid: MonthlyLimit(budget, max(ledger.get(kid, 0), counted[f"spent:{kid}"]), counted[f"held:{kid}"])
        for kid, budget in key_budgets.items()
    }
    return tenant, keys


def _counters(tenant_id: int, key_ids: list[int], month: str) -> dict[str, int]:
    names = ["tenant_spent", "tenant_held"] + [f"{kind}:{kid}" for kid in key_ids for kind in ("spent", "held")]
    try:
        pipe = get_redis().pipeline(transaction=False)
        pipe.get(rk.tenant_month_spend(tenant_id, month))
        pipe.hget(rk.tenant_held(tenant_id), rk.HELD_TENANT_FIELD)
        for kid in key_ids:
            pipe.get(rk.key_month_spend(tenant_id, kid, month))
            pipe.hget(rk.tenant_held(tenant_id), rk.held_key_field(kid))
        values = pipe.execute()
    except redis.RedisError as exc:  # the ledger alone: see the module's docstring
        logger.warning("month spend counters of tenant %s unreadable: %s", tenant_id, exc)
        values = [None] * len(names)
    return {name: max(0, int(value or 0)) for name, value in zip(names, values, strict=True)}
