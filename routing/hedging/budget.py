"""A tenant's hedge budget: hedged attempts in the last 60 s are at most ``share`` of its requests in
the last 60 s plus ``burst`` (sliding, as admission's RPM; counted in Redis, so every gateway
process spends from one budget).

Spent only when a first byte is late, never on an ordinary request's path. With Redis unreachable
no hedge is started: the budget cannot be checked, and failover still works without it.
"""

from __future__ import annotations

import logging
import time

import hiredis

from contracts import redis_keys as rk
from routing.limits.admission import Admission
from routing.limits.scripts import HEDGE
from routing.redis.pipe import PipelinedRedis, RedisUnavailable

log = logging.getLogger("routing.hedge")

HEDGE_SHARE = 0.05  # ≤ 5% extra upstream requests per tenant
HEDGE_BURST = 1.0  # so a tenant with little traffic can still be hedged once a minute


async def spend_hedge(
    redis: PipelinedRedis, admission: Admission | None, *, share: float = HEDGE_SHARE, burst: float = HEDGE_BURST,
    now: float | None = None,
) -> bool:  # fmt: skip
    if admission is None or share <= 0:
        return False
    now = time.time() if now is None else now
    tenant, minute = admission.tenant_id, int(now // 60)  # the first byte is late now, maybe a minute on
    keys = [rk.rate_window(tenant, "tenant", minute), rk.hedge_window(tenant, minute),
            rk.rate_window(tenant, "tenant", minute - 1), rk.hedge_window(tenant, minute - 1)]  # fmt: skip
    try:
        return bool(await HEDGE.run(redis, keys, [repr(share), repr(burst), f"{now:.3f}"]))
    except (RedisUnavailable, OSError, hiredis.ReplyError) as exc:
        log.warning("hedge budget unreadable, not hedging: %s", exc)
        return False
