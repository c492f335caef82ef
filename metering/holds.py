"""Balance holds in Redis: the atomic check-and-reserve the gateway runs, and its reaper.

The gateway (routing/limits) owns the request-path copy of these scripts; this
module is metering's reference implementation of the same contract, used by the
reaper, reconciliation and the tests. Race: many requests of one tenant reserve
at once; each script runs atomically in Redis, so the check and the DECRBY are
one step and the balance is never overdrawn.
"""

from __future__ import annotations

import time

import redis

from contracts.redis_keys import HOLD_EXPIRIES, tenant_available, tenant_holds

# KEYS: avail, holds, expiries. ARGV: hold_id, amount, expires_at, member.
_HOLD_PLACE = """
local avail = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[2])
if avail < amount then return 0 end
redis.call('DECRBY', KEYS[1], amount)
redis.call('HSET', KEYS[2], ARGV[1], amount)
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
return 1
"""

# KEYS: avail, holds, expiries. ARGV: hold_id, charge, member. Only the caller that removes the hold settles it.
_HOLD_SETTLE = """
local held = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '-1')
if held < 0 then return 0 end
if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then
  redis.call('INCRBY', KEYS[1], held - tonumber(ARGV[2]))
  redis.call('ZREM', KEYS[3], ARGV[3])
  return 1
end
return 0
"""

# Reaper chunk: releases at most this many expired holds per call (one round trip each chunk).
REAP_CHUNK = 500


def _member(tenant_id: int, hold_id: str) -> str:
    return f"{tenant_id}:{hold_id}"


def hold_place(client: redis.Redis, *, tenant_id: int, hold_id: str, amount_micros: int, ttl_s: float) -> bool:
    keys = [tenant_available(tenant_id), tenant_holds(tenant_id), HOLD_EXPIRIES]
    expires = time.time() + ttl_s
    return bool(client.eval(_HOLD_PLACE, 3, *keys, hold_id, amount_micros, expires, _member(tenant_id, hold_id)))


def hold_settle(client: redis.Redis, *, tenant_id: int, hold_id: str, charge_micros: int) -> bool:
    """Release the hold and keep the actual charge; False when it was already settled or reaped."""
    keys = [tenant_available(tenant_id), tenant_holds(tenant_id), HOLD_EXPIRIES]
    return bool(client.eval(_HOLD_SETTLE, 3, *keys, hold_id, charge_micros, _member(tenant_id, hold_id)))


def holds_reap(client: redis.Redis, *, now: float | None = None) -> int:
    """Release every expired hold in full (same idempotent rule as settle with a zero charge)."""
    now = time.time() if now is None else now
    released = 0
    while True:
        members = client.zrangebyscore(HOLD_EXPIRIES, "-inf", now, start=0, num=REAP_CHUNK)
        if not members:
            return released
        for member in members:
            raw = member.decode() if isinstance(member, bytes) else str(member)
            tenant, _, hold_id = raw.partition(":")
            if hold_settle(client, tenant_id=int(tenant), hold_id=hold_id, charge_micros=0):
                released += 1
            else:
                client.zrem(HOLD_EXPIRIES, raw)  # stale entry whose hold was settled elsewhere
        if len(members) < REAP_CHUNK:
            return released


def holds_open_micros(client: redis.Redis, *, tenant_id: int) -> int:
    return sum(int(v) for v in client.hvals(tenant_holds(tenant_id)))
