"""Key budgets and the tenant's monthly spend limit in the admission and settlement scripts, on a real
Redis: settled spend plus every open hold is compared with the limit, and a hold is taken off the
held counters once, whether settlement or metering's hold reaper removes it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis
from django.conf import settings

from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord
from metering.holds import holds_reap
from routing.http.errors import GatewayError
from routing.limits.admission import Admission, admit, settle
from routing.redis.client import redis_client as gateway_redis
from routing.redis.pipe import PipelinedRedis

TID = 4343  # no database row: the scripts know tenants by id only
FUNDS = 10_000_000
HOLD = 25_000
CHARGE = 7_000


@pytest.fixture
async def pipe(redis_client: redis.Redis) -> AsyncIterator[PipelinedRedis]:
    client = gateway_redis(settings.REDIS_URL, None)  # the cluster client when REDIS_URL is a cluster node
    await client.connect()
    redis_client.set(rk.tenant_available(TID), FUNDS)
    yield client
    await client.close()


def _record(*, key_id: int = 1, budget: int | None = None, spend_limit: int | None = None) -> KeyRecord:
    return KeyRecord(
        key_id=key_id,
        tenant_id=TID,
        tenant_slug="acme",
        name="k",
        prefix="tw_test",
        monthly_budget_micros=budget,
        tenant_monthly_spend_limit_micros=spend_limit,
    )


async def _admit(pipe: PipelinedRedis, record: KeyRecord, **kw: Any) -> Admission:
    return await admit(pipe, record, **{"tokens": 300, "hold_micros": HOLD, "lifetime_s": 60.0, **kw})


async def _refused(pipe: PipelinedRedis, record: KeyRecord, **kw: Any) -> GatewayError:
    with pytest.raises(GatewayError) as refused:
        await _admit(pipe, record, **kw)
    return refused.value


def _state(r: redis.Redis) -> dict[Any, Any]:
    readers: dict[Any, Any] = {
        b"string": r.get,
        b"hash": r.hgetall,
        b"zset": lambda k: r.zrange(k, 0, -1, withscores=True),
    }
    return {key: readers[r.type(key)](key) for key in sorted(r.keys("*"))}


def _held(r: redis.Redis) -> dict[str, int]:
    fields: dict[bytes, bytes] = r.hgetall(rk.tenant_held(TID))  # type: ignore[assignment]
    return {name.decode(): int(value) for name, value in fields.items()}


def _month() -> str:
    return time.strftime("%Y%m", time.gmtime())


async def test_open_holds_count_against_the_key_budget_until_settled(pipe, redis_client):
    record = _record(budget=3 * HOLD)
    first, second, _ = [await _admit(pipe, record) for _ in range(3)]  # nothing settled: only holds
    assert _held(redis_client) == {"k:1": 3 * HOLD, "tenant": 3 * HOLD}
    before = _state(redis_client)
    refused = await _refused(pipe, record)
    assert (refused.status, refused.code) == (402, "key_budget_exceeded")
    assert _state(redis_client) == before  # nothing written
    await settle(pipe, first, charge_micros=CHARGE, tokens_used=300)  # 7,000 spent + 2 holds: 18,000 short
    assert int(redis_client.get(rk.key_month_spend(TID, 1, _month()))) == CHARGE
    assert (await _refused(pipe, record)).code == "key_budget_exceeded"
    await settle(pipe, second, charge_micros=0, tokens_used=300)
    await _admit(pipe, record)  # 7,000 + 1 hold + this hold = 57,000 <= 75,000
    assert _held(redis_client) == {"k:1": 2 * HOLD, "tenant": 2 * HOLD}


async def test_the_tenant_spend_limit_counts_every_key_s_open_holds_and_spend(pipe, redis_client):
    limit = 2 * HOLD + CHARGE
    one, two = _record(key_id=1, spend_limit=limit), _record(key_id=2, spend_limit=limit)
    first = await _admit(pipe, one)
    await _admit(pipe, two)
    before = _state(redis_client)
    refused = await _refused(pipe, one)
    assert (refused.status, refused.code, refused.retry_after) == (402, "tenant_spend_limit_exceeded", None)
    assert _state(redis_client) == before
    assert _held(redis_client) == {"k:1": HOLD, "k:2": HOLD, "tenant": 2 * HOLD}
    await settle(pipe, first, charge_micros=CHARGE, tokens_used=300)
    assert int(redis_client.get(rk.tenant_month_spend(TID, _month()))) == CHARGE
    await _admit(pipe, two)  # 7,000 spent + one hold + this one: exactly the limit
    assert (await _refused(pipe, two)).code == "tenant_spend_limit_exceeded"


@pytest.mark.parametrize("hold", [HOLD, 0])
async def test_a_1_micro_limit_with_spend_booked_is_refused(pipe, redis_client, hold):
    redis_client.set(rk.tenant_month_spend(TID, _month()), 4_603)
    refused = await _refused(pipe, _record(spend_limit=1), hold_micros=hold)
    assert (refused.status, refused.code) == (402, "tenant_spend_limit_exceeded")
    assert int(redis_client.get(rk.tenant_available(TID))) == FUNDS and not redis_client.exists(rk.tenant_held(TID))


async def test_no_limit_and_a_zero_limit(pipe, redis_client):
    await _admit(pipe, _record())  # no budget, no spend limit: only the balance
    assert (await _refused(pipe, _record(spend_limit=0))).code == "tenant_spend_limit_exceeded"
    assert (await _refused(pipe, _record(budget=0))).code == "key_budget_exceeded"


async def test_expired_holds_reaped_while_settling_are_given_back_once(pipe, redis_client):
    """Metering's reaper and the gateway's settlement race on expired holds: whoever removes a hold takes
    it off the held counters, once. A hold still open keeps its amount: a double release would lower it."""
    record = _record(budget=20 * HOLD, spend_limit=20 * HOLD)
    await _admit(pipe, record)  # open, not expired
    reaped_first = [await _admit(pipe, record, lifetime_s=-1.0) for _ in range(6)]
    assert holds_reap(redis_client) == 6  # the reaper wins these; their settlements come late
    assert _held(redis_client) == {"k:1": HOLD, "tenant": HOLD}
    assert [await settle(pipe, adm, charge_micros=CHARGE, tokens_used=300) for adm in reaped_first] == [False] * 6
    raced = [await _admit(pipe, record, lifetime_s=-1.0) for _ in range(6)]
    reaping = asyncio.to_thread(holds_reap, redis_client)  # its own connection, interleaved with the settles
    reaped, *settled = await asyncio.gather(
        reaping, *(settle(pipe, adm, charge_micros=CHARGE, tokens_used=300) for adm in raced)
    )
    assert reaped + sum(settled) == len(raced)
    expired = reaped_first + raced
    assert _held(redis_client) == {"k:1": HOLD, "tenant": HOLD}
    assert redis_client.hkeys(rk.tenant_hold_keys(TID)) == redis_client.hkeys(rk.tenant_holds(TID))
    assert int(redis_client.get(rk.tenant_available(TID))) == FUNDS - HOLD - sum(settled) * CHARGE
    spent = len(expired) * CHARGE  # a late settlement still books its charge as spend
    assert int(redis_client.get(rk.key_month_spend(TID, 1, _month()))) == spent
    room = 20 * HOLD - spent - HOLD
    for _ in range(room // HOLD):
        await _admit(pipe, record)
    assert (await _refused(pipe, record)).code == "key_budget_exceeded"
    assert holds_reap(redis_client) == 0 and _held(redis_client)["tenant"] == (1 + room // HOLD) * HOLD


async def test_a_hold_placed_before_the_held_counters_is_released_without_touching_them(pipe, redis_client):
    adm = await _admit(pipe, _record(budget=10 * HOLD), lifetime_s=-1.0)
    redis_client.hdel(rk.tenant_hold_keys(TID), adm.hold_id)  # as an older gateway left it: never counted
    redis_client.hset(rk.tenant_held(TID), mapping={"k:1": 0, "tenant": 0})
    assert holds_reap(redis_client) == 1
    assert int(redis_client.get(rk.tenant_available(TID))) == FUNDS
    assert _held(redis_client) == {"k:1": 0, "tenant": 0}
