"""Hedge delay from the measured TTFT, and the tenant's hedge budget in Redis."""

from __future__ import annotations

import asyncio
import os

import pytest

from contracts import redis_keys as rk
from contracts.snapshot import OfferingStats
from routing.hedging.budget import spend_hedge
from routing.hedging.race import p95_ttft_ms
from routing.limits.admission import Admission
from routing.redis.client import redis_client as gateway_redis

pytestmark = pytest.mark.cluster


def test_the_hedge_delay_is_the_p95_for_this_prompt_size():
    stats = OfferingStats(1, n=100, ttft_p50_ms=400, ttft_p90_ms=800, ttft_10k_p50_ms=1300)
    assert p95_ttft_ms(stats, None, input_tokens=500) == pytest.approx(1000)
    assert p95_ttft_ms(stats, None, input_tokens=10_000) == pytest.approx(1000 + 0.1 * 9000)  # 0.1 ms/token
    assert p95_ttft_ms(OfferingStats(1, n=5, ttft_p50_ms=300), None, input_tokens=0) == pytest.approx(600)
    assert p95_ttft_ms(stats, 2000.0, input_tokens=0) == pytest.approx(3000)  # slow for everyone right now
    assert p95_ttft_ms(None, None, input_tokens=0) is None  # unmeasured: not hedged


def test_the_budget_is_a_share_of_the_tenants_requests_in_the_last_minute_plus_a_burst(redis_client):
    minute = 29_000_000
    admission = Admission(
        tenant_id=77,
        key_id=770,
        minute=minute,
        month="202611",
        tokens_reserved=0,
        lease_id="l",
        hold_id="h",
        hold_micros=0,
    )
    window = rk.rate_window(77, "tenant", minute)

    async def spend(times: int, now: float) -> list[bool]:
        redis = gateway_redis(os.environ["REDIS_URL"], None)
        await redis.connect()
        try:
            return [await spend_hedge(redis, admission, share=0.05, burst=1, now=now) for _ in range(times)]
        finally:
            await redis.close()

    redis_client.hset(window, "r", 1)
    assert asyncio.run(spend(3, minute * 60 + 10)) == [True, False, False]  # 1 request: the burst only
    redis_client.hset(window, "r", 40)  # 40 requests: 0.05 x 40 + 1 = 3 hedges in all
    assert asyncio.run(spend(3, minute * 60 + 20)) == [True, True, False]
    assert int(redis_client.get(rk.hedge_window(77, minute))) == 3
    assert redis_client.ttl(rk.hedge_window(77, minute)) > 0
    # A second into the next minute the last 60 s still hold (59/60 of) those 3 hedges and 40 requests:
    # 2.95 + 1 > 0.05 x 39.3 + 1. A fixed window would have granted 1 + 5% of nothing again.
    assert asyncio.run(spend(1, (minute + 1) * 60 + 1)) == [False]
    # Half a minute on, half have faded: 1.5 + 1 > 0.05 x 20 + 1. A minute after them, none is left.
    assert asyncio.run(spend(1, (minute + 1) * 60 + 30)) == [False]
    assert asyncio.run(spend(1, (minute + 2) * 60)) == [True]
    assert asyncio.run(spend_without_admission()) is False


async def spend_without_admission() -> bool:
    redis = gateway_redis(os.environ["REDIS_URL"], None)
    return await spend_hedge(redis, None)
