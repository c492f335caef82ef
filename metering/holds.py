"""Balance holds in Redis: the atomic check-and-reserve the gateway runs, and its reaper.

The gateway (routing/limits) owns the request-path copy of these scripts; this
module is metering's reference implementation of the same contract, used by the
reaper, reconciliation and the tests. Race: many requests of one tenant reserve
at once; each script runs atomically in Redis, so the check and the DECRBY are
one step and the balance is never overdrawn. Every key a script touches carries the
tenant's hash tag (one Redis Cluster slot); the expiry index is per tenant, so the
reaper walks tenants (their ids from PostgreSQL, pipelined: one round trip per node
for a chunk of tenants).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

import redis

from contracts.redis_keys import (
    HELD_KEY_PREFIX,
    HOLD_EXPIRIES,
    PREFIX,
    tenant_available,
    tenant_held,
    tenant_hold_expiries,
    tenant_hold_keys,
    tenant_holds,
)

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

# KEYS: avail, holds, expiries, held by open holds (monthly limits), hold -> key id.
# ARGV: hold_id, charge, member, the held hash's key field prefix.
# Only the caller that removes the hold settles it. Race: the reaper and the gateway's settle.lua on
# an expired hold; the HDEL that wins gives the hold back to avail and takes it off the monthly limits'
# held counters (the key's and the tenant's), so both are given back exactly once, whoever wins.
_HOLD_SETTLE = """
local held = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '-1')
if held < 0 then return 0 end
if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then
  redis.call('INCRBY', KEYS[1], held - tonumber(ARGV[2]))
  redis.call('ZREM', KEYS[3], ARGV[3])
  local key_id = redis.call('HGET', KEYS[5], ARGV[1])
  if key_id and redis.call('HDEL', KEYS[5], ARGV[1]) == 1 then
    for _, name in ipairs({ARGV[4] .. key_id, 'tenant'}) do
      if redis.call('HINCRBY', KEYS[4], name, -held) <= 0 then redis.call('HDEL', KEYS[4], name) end
    end
  end
  return 1
end
return 0
"""

# Reaper chunk: releases at most this many expired holds of a tenant per read (one round trip each).
REAP_CHUNK = 500
# Tenants whose expiry index is read in one pipeline: a few hundred replies, one round trip per node.
TENANT_CHUNK = 500


def _member(tenant_id: int, hold_id: str) -> str:
    return f"{tenant_id}:{hold_id}"


def hold_place(client: redis.Redis, *, tenant_id: int, hold_id: str, amount_micros: int, ttl_s: float) -> bool:
    keys = [tenant_available(tenant_id), tenant_holds(tenant_id), tenant_hold_expiries(tenant_id)]
    expires = time.time() + ttl_s
    return bool(client.eval(_HOLD_PLACE, 3, *keys, hold_id, amount_micros, expires, _member(tenant_id, hold_id)))


def hold_settle(client: redis.Redis, *, tenant_id: int, hold_id: str, charge_micros: int) -> bool:
    """Release the hold and keep the actual charge; False when it was already settled or reaped.
    What the hold counted against the key's budget and the tenant's spend limit is released with it."""
    keys = [
        tenant_available(tenant_id), tenant_holds(tenant_id), tenant_hold_expiries(tenant_id),
        tenant_held(tenant_id), tenant_hold_keys(tenant_id),
    ]  # fmt: skip
    member = _member(tenant_id, hold_id)
    return bool(client.eval(_HOLD_SETTLE, len(keys), *keys, hold_id, charge_micros, member, HELD_KEY_PREFIX))


def holds_reap(client: redis.Redis, *, tenant_ids: Iterable[int] | None = None, now: float | None = None) -> int:
    """Release every expired hold in full (same idempotent rule as settle with a zero charge).

    ``tenant_ids``: the tenants to walk (the task passes PostgreSQL's); None finds them by SCAN.
    """
    now = time.time() if now is None else now
    legacy_expiries_drain(client)
    ids = tenant_ids if tenant_ids is not None else tenants_with_holds(client)
    released = 0
    for chunk in _chunks(ids, TENANT_CHUNK):
        pipe = client.pipeline(transaction=False)
        for tenant_id in chunk:
            pipe.zrangebyscore(tenant_hold_expiries(tenant_id), "-inf", now, start=0, num=REAP_CHUNK)
        for tenant_id, members in zip(chunk, pipe.execute(), strict=True):
            released += _tenant_reap(client, tenant_id, members, now)
    return released


def _tenant_reap(client: redis.Redis, tenant_id: int, members: list[Any], now: float) -> int:
    released = 0
    index = tenant_hold_expiries(tenant_id)
    while members:
        for member in members:
            hold_id = _text(member).partition(":")[2]
            if hold_settle(client, tenant_id=tenant_id, hold_id=hold_id, charge_micros=0):
                released += 1
            else:
                client.zrem(index, member)  # stale entry whose hold was settled elsewhere
        if len(members) < REAP_CHUNK:
            break
        members = list(client.zrangebyscore(index, "-inf", now, start=0, num=REAP_CHUNK))
    return released


def legacy_expiries_drain(client: redis.Redis) -> int:
    """Move what is left in the old global index (``HOLD_EXPIRIES``) to the tenants' own; returns entries moved.

    Runs before each reap and is one EXISTS once the key is gone. Not atomic across the two keys
    (different cluster slots): a hold settled meanwhile leaves a stale entry that the reaper drops.
    """
    moved = 0
    while rows := _scored(client.zrange(HOLD_EXPIRIES, 0, REAP_CHUNK - 1, withscores=True)):
        pipe = client.pipeline(transaction=False)
        for member, score in rows:
            tenant = _text(member).partition(":")[0]
            if tenant.isdigit():  # anything else was never a hold of ours
                pipe.zadd(tenant_hold_expiries(int(tenant)), {member: score}, nx=True)
        pipe.execute()
        client.zrem(HOLD_EXPIRIES, *[member for member, _ in rows])
        moved += len(rows)
    return moved


def tenants_with_holds(client: redis.Redis) -> list[int]:
    """Tenant ids that have an expiry index, by SCAN (every node of a cluster)."""
    head, tail = f"{PREFIX}{{t", "}:holds:expiry"
    names = (_text(name) for name in client.scan_iter(match=f"{head}*{tail}", count=1000))
    return sorted({int(name[len(head) : -len(tail)]) for name in names if name[len(head) : -len(tail)].isdigit()})


def holds_expired_count(client: redis.Redis, *, tenant_ids: Iterable[int], before: float) -> int:
    """Open holds that expired before ``before``, over the given tenants and the old global index."""
    count = int(client.zcount(HOLD_EXPIRIES, "-inf", before))
    for chunk in _chunks(tenant_ids, TENANT_CHUNK):
        pipe = client.pipeline(transaction=False)
        for tenant_id in chunk:
            pipe.zcount(tenant_hold_expiries(tenant_id), "-inf", before)
        count += sum(int(n) for n in pipe.execute())
    return count


def _scored(reply: Any) -> list[tuple[bytes, float]]:
    return [(member, float(score)) for member, score in reply]


def _chunks(ids: Iterable[int], size: int) -> Iterator[list[int]]:
    iterator = iter(ids)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def holds_open_micros(client: redis.Redis, *, tenant_id: int) -> int:
    return sum(int(v) for v in client.hvals(tenant_holds(tenant_id)))
