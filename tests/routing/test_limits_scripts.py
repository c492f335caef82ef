"""The admission and settlement Lua scripts, run on a real Redis through routing/limits (scripts.py's
EVALSHA with EVAL fallback), with the Redis state checked after every call."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis
from django.conf import settings

from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord, Limits
from metering.holds import holds_reap
from routing.http.errors import GatewayError
from routing.limits.admission import MONTH_SPEND_TTL_S, Admission, admit, settle, settle_call
from routing.limits.scripts import SETTLE
from routing.redis.client import redis_client as gateway_redis
from routing.redis.pipe import PipelinedRedis

pytestmark = [pytest.mark.cluster, pytest.mark.local_servers]

TID = 4242  # no database row: the scripts know tenants by id only
FUNDS = 1_000_000
HOLD = 25_000
LIFETIME_S = 60.0


@pytest.fixture
async def pipe(redis_client: redis.Redis) -> AsyncIterator[PipelinedRedis]:
    client = gateway_redis(settings.REDIS_URL, None)  # the cluster client when REDIS_URL is a cluster node
    await client.connect()
    yield client
    await client.close()


def _record(*, key: Limits | None = None, tenant: Limits | None = None, budget: int | None = None) -> KeyRecord:
    return KeyRecord(
        key_id=1,
        tenant_id=TID,
        tenant_slug="acme",
        name="k",
        prefix="tw_test",
        key_limits=key or Limits(),
        tenant_limits=tenant or Limits(),
        monthly_budget_micros=budget,
    )


def _state(r: redis.Redis) -> dict[Any, Any]:
    """Every key with its value (strings, hashes, sorted sets with scores)."""
    readers: dict[Any, Any] = {
        b"string": r.get,
        b"hash": r.hgetall,
        b"zset": lambda key: r.zrange(key, 0, -1, withscores=True),
    }
    return {key: readers[r.type(key)](key) for key in sorted(r.keys("*"))}


def _windows(adm: Admission) -> list[str]:
    return [rk.rate_window(TID, "key:1", adm.minute), rk.rate_window(TID, "tenant", adm.minute)]


def _leases() -> list[str]:
    return [rk.concurrency(TID, "key:1"), rk.concurrency(TID, "tenant")]


async def _admit(pipe: PipelinedRedis, record: KeyRecord, **kw: Any) -> Admission:
    args = {"tokens": 300, "hold_micros": HOLD, "lifetime_s": LIFETIME_S, **kw}
    return await admit(pipe, record, **args)


async def test_an_admitted_request_is_counted_leased_and_holds_its_worst_case_cost(pipe, redis_client):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    limits = Limits(rpm=10, tpm=10_000, max_concurrency=5)
    before = time.time()
    adm = await _admit(pipe, _record(key=limits, tenant=limits), tokens=300)
    for window in _windows(adm):
        assert redis_client.hgetall(window) == {b"r": b"1", b"t": b"300"}
        assert 0 < redis_client.ttl(window) <= 120
    for lease in _leases():
        assert before + LIFETIME_S <= redis_client.zscore(lease, adm.lease_id) <= time.time() + LIFETIME_S
    assert int(redis_client.get(rk.tenant_available(TID))) == FUNDS - HOLD
    assert redis_client.hgetall(rk.tenant_holds(TID)) == {adm.hold_id.encode(): str(HOLD).encode()}
    expiry = redis_client.zscore(
        rk.tenant_hold_expiries(adm.tenant_id), adm.hold_member
    )  # registered for metering's reaper
    assert before + LIFETIME_S <= expiry <= time.time() + LIFETIME_S


async def test_without_concurrency_limits_no_lease_is_taken(pipe, redis_client):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    await _admit(pipe, _record())
    assert all(not redis_client.exists(lease) for lease in _leases())


@pytest.mark.parametrize(
    ("key", "tenant", "tokens", "admitted", "code"),
    [
        (Limits(rpm=2), Limits(), 1, 2, "key_rate_limited"),
        (Limits(), Limits(rpm=1), 1, 1, "tenant_rate_limited"),
        (Limits(tpm=500), Limits(), 300, 1, "key_token_rate_limited"),
        (Limits(), Limits(tpm=900), 300, 3, "tenant_token_rate_limited"),
    ],
)
async def test_rate_limits_refuse_with_429_and_retry_after_writing_nothing(
    pipe, redis_client, key, tenant, tokens, admitted, code
):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    record = _record(key=key, tenant=tenant)
    for _ in range(admitted):
        await _admit(pipe, record, tokens=tokens)
    before = _state(redis_client)
    with pytest.raises(GatewayError) as refused:
        await _admit(pipe, record, tokens=tokens)
    assert (refused.value.status, refused.value.code) == (429, code)
    assert 1 <= refused.value.retry_after <= 120  # until the sliding 60 s leaves room
    assert _state(redis_client) == before
    assert int(redis_client.get(rk.tenant_available(TID))) == FUNDS - admitted * HOLD


async def _refusal(pipe: PipelinedRedis, record: KeyRecord, at: float, **kw: Any) -> GatewayError | None:
    try:
        await _admit(pipe, record, now=at, **kw)
    except GatewayError as refused:
        return refused
    return None


# (limit, tokens per request, requests before, second of the minute they arrive, when the next asks,
#  the Retry-After that follows: the sliding estimate's own arithmetic, see admission.lua)
SLIDING = [
    # Three at 12:00:59, the limit; at 12:01:00.5 a fixed window would admit three more. The previous
    # minute still counts 59.5/60 of 3: room for the fourth when 3 x share <= 2, 20 s later.
    (Limits(rpm=3), 1, 3, 59.0, 61.5 - 1.0, 20),
    # Two at 12:00:00.5, the limit, and a third asking at once: this minute alone is over. At 12:01:00
    # the two still count 2 x 60/60, and fit one more at 2 x share <= 1, 30 s into the next minute.
    (Limits(rpm=2), 1, 2, 0.5, 0.5, 90),
    # Tokens the same way: 900 of a 1,000 TPM at 12:00:30; 300 more at 12:01:10 are over by 100 of
    # the carried 900 x 50/60 = 750: room once 900 x share <= 700, at 12:01:13.33.
    (Limits(tpm=1_000), 300, 3, 30.0, 70.0, 4),
]


@pytest.mark.parametrize(("limits", "tokens", "before", "at_s", "asks_s", "retry_s"), SLIDING)
async def test_rate_limits_slide_over_60_s_and_retry_after_is_when_room_returns(
    pipe, redis_client, limits, tokens, before, at_s, asks_s, retry_s
):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    record = _record(key=limits)
    minute_start = (time.time() // 60 + 10) * 60  # a minute of its own: no other test's windows
    for _ in range(before):
        await _admit(pipe, record, tokens=tokens, now=minute_start + at_s)
    asks = minute_start + asks_s
    refused = await _refusal(pipe, record, asks, tokens=tokens)
    assert refused is not None and refused.status == 429 and refused.retry_after == retry_s
    assert await _refusal(pipe, record, asks + retry_s - 1, tokens=tokens) is not None  # a second early
    assert await _refusal(pipe, record, asks + retry_s, tokens=tokens) is None  # admitted when it said


async def test_a_key_without_rate_limits_is_counted_and_never_refused(pipe, redis_client):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    for _ in range(30):
        await _admit(pipe, _record(), hold_micros=0)  # counted, never refused
    assert int(redis_client.hget(_windows(await _admit(pipe, _record(), hold_micros=0))[0], "r")) == 31


@pytest.mark.parametrize(
    ("key", "tenant", "code"),
    [
        (Limits(max_concurrency=1), Limits(), "key_concurrency_limited"),
        (Limits(), Limits(max_concurrency=1), "tenant_concurrency_limited"),
    ],
)
async def test_concurrency_refuses_until_the_lease_is_settled(pipe, redis_client, key, tenant, code):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    record = _record(key=key, tenant=tenant)
    first = await _admit(pipe, record)
    before = _state(redis_client)
    with pytest.raises(GatewayError) as refused:
        await _admit(pipe, record)
    assert (refused.value.status, refused.value.code, refused.value.retry_after) == (429, code, 1.0)
    assert _state(redis_client) == before
    await settle(pipe, first, charge_micros=0, tokens_used=300)
    second = await _admit(pipe, record)
    busy = [lease for lease in _leases() if redis_client.exists(lease)]
    assert busy and all(redis_client.zrange(lease, 0, -1) == [second.lease_id.encode()] for lease in busy)


async def test_a_lease_past_its_expiry_no_longer_counts(pipe, redis_client):
    """A gateway that died mid-request leaks its lease only until the lease's expiry."""
    redis_client.set(rk.tenant_available(TID), FUNDS)
    record = _record(key=Limits(max_concurrency=1))
    await _admit(pipe, record, lifetime_s=-1.0)
    fresh = await _admit(pipe, record)
    assert redis_client.zrange(rk.concurrency(TID, "key:1"), 0, -1) == [fresh.lease_id.encode()]


async def test_a_hold_above_the_available_balance_is_refused_with_402_writing_nothing(pipe, redis_client):
    redis_client.set(rk.tenant_available(TID), HOLD - 1)
    before = _state(redis_client)
    with pytest.raises(GatewayError) as refused:
        await _admit(pipe, _record(key=Limits(rpm=5, max_concurrency=5)))
    assert (refused.value.status, refused.value.code, refused.value.retry_after) == (402, "insufficient_balance", None)
    assert _state(redis_client) == before


async def test_the_last_dollars_are_held_once(pipe, redis_client):
    redis_client.set(rk.tenant_available(TID), HOLD)
    await _admit(pipe, _record())
    assert int(redis_client.get(rk.tenant_available(TID))) == 0
    with pytest.raises(GatewayError) as refused:
        await _admit(pipe, _record())
    assert refused.value.code == "insufficient_balance"
    assert len(redis_client.hgetall(rk.tenant_holds(TID))) == 1


async def test_a_hold_that_would_pass_the_key_budget_is_refused(pipe, redis_client):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    month = time.strftime("%Y%m", time.gmtime())
    redis_client.set(rk.key_month_spend(TID, 1, month), 10_000)
    before = _state(redis_client)
    with pytest.raises(GatewayError) as refused:
        await _admit(pipe, _record(budget=10_000 + HOLD - 1))
    assert (refused.value.status, refused.value.code) == (402, "key_budget_exceeded")
    assert _state(redis_client) == before
    await _admit(pipe, _record(budget=10_000 + HOLD))  # exactly the budget fits


async def test_settle_keeps_the_charge_and_gives_back_the_rest_of_the_hold(pipe, redis_client):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    limits = Limits(rpm=10, tpm=10_000, max_concurrency=5)
    adm = await _admit(pipe, _record(key=limits, tenant=limits), tokens=300)
    assert await settle(pipe, adm, charge_micros=7_000, tokens_used=120) is True
    assert int(redis_client.get(rk.tenant_available(TID))) == FUNDS - 7_000
    assert not redis_client.exists(rk.tenant_holds(TID))
    assert redis_client.zscore(rk.tenant_hold_expiries(adm.tenant_id), adm.hold_member) is None
    spend = rk.key_month_spend(TID, 1, adm.month)
    assert int(redis_client.get(spend)) == 7_000
    assert MONTH_SPEND_TTL_S - 5 <= redis_client.ttl(spend) <= MONTH_SPEND_TTL_S
    assert all(redis_client.zcard(lease) == 0 for lease in _leases())
    for window in _windows(adm):  # the reservation of 300 tokens corrected to the 120 used
        assert redis_client.hgetall(window) == {b"r": b"1", b"t": b"120"}


async def test_settling_twice_gives_nothing_back_twice(pipe, redis_client):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    adm = await _admit(pipe, _record(key=Limits(max_concurrency=5)))
    assert await settle(pipe, adm, charge_micros=7_000, tokens_used=300) is True
    after = _state(redis_client)
    assert await settle(pipe, adm, charge_micros=7_000, tokens_used=300) is False
    assert _state(redis_client) == after
    keys, args = settle_call(adm, charge_micros=7_000, tokens_used=300)
    assert await SETTLE.run(pipe, keys, args) == 0  # the script itself, replayed: the hold is gone
    assert int(redis_client.get(rk.tenant_available(TID))) == FUNDS - 7_000
    assert not redis_client.exists(rk.tenant_holds(TID))


async def test_an_expired_hold_reaped_by_metering_is_not_given_back_again_by_settle(pipe, redis_client):
    redis_client.set(rk.tenant_available(TID), FUNDS)
    adm = await _admit(pipe, _record(), lifetime_s=-1.0)
    assert redis_client.zscore(rk.tenant_hold_expiries(adm.tenant_id), adm.hold_member) < time.time()
    assert holds_reap(redis_client) == 1
    assert int(redis_client.get(rk.tenant_available(TID))) == FUNDS
    assert redis_client.zcard(rk.tenant_hold_expiries(adm.tenant_id)) == 0
    assert await settle(pipe, adm, charge_micros=7_000, tokens_used=300) is False
    assert int(redis_client.get(rk.tenant_available(TID))) == FUNDS
    assert not redis_client.exists(rk.tenant_holds(TID))
