"""Live signals shared by gateway processes through Redis, fading with time."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable

import pytest

from routing.failover.health import HealthBoard
from routing.failover.shared import LIVE_KEY, sync_once
from routing.redis.client import redis_client as redis_client_for
from routing.redis.pipe import PipelinedRedis
from tests.waiting import ManualClock

pytestmark = pytest.mark.cluster


def _boards() -> tuple[ManualClock, HealthBoard, HealthBoard]:
    """Two processes' health boards on one clock."""
    clock = ManualClock(1_700_000_000.0)
    a, b = (HealthBoard(failures_to_open=3, cooldown_s=15, clock=clock) for _ in range(2))
    return clock, a, b


def _on_shared_redis(steps: Callable[[PipelinedRedis], Awaitable[None]]) -> None:
    """Run ``steps`` with the gateway's client of the run's Redis (a ClusterRedis in the cluster pass)."""

    async def scenario() -> None:
        redis = redis_client_for(os.environ["REDIS_URL"], None)
        await redis.connect()
        try:
            await steps(redis)
        finally:
            await redis.close()

    asyncio.run(scenario())


def test_errors_429s_and_latency_seen_by_one_process_reach_the_other_and_fade(redis_client):
    clock, a, b = _boards()

    async def steps(redis: PipelinedRedis) -> None:
        a.failure(7)
        a.failure(7, throttled=True)
        a.success(8, 250.0)
        await sync_once(redis, a)
        await sync_once(redis, b)  # b has seen no traffic itself
        seen = b.live(7)
        assert seen.error_rate > 0.3 and seen.throttle_rate > 0.1
        assert b.live(8).latency_ms == 250.0
        assert a.drain_pending() == {}  # a's observations were merged once, not again
        clock.advance(60)
        await sync_once(redis, b)
        assert b.live(7).error_rate < seen.error_rate / 15  # faded in Redis and locally

    _on_shared_redis(steps)
    assert redis_client.ttl(LIVE_KEY) > 0


def test_observations_are_kept_for_the_next_sync_when_redis_is_down():
    board = HealthBoard(failures_to_open=3, cooldown_s=15, clock=ManualClock())

    async def scenario() -> None:
        redis = PipelinedRedis("redis://127.0.0.1:1/0")  # nothing listens there
        board.failure(3)
        await sync_once(redis, board)

    asyncio.run(scenario())
    assert board.drain_pending()[3].failed == 1


def test_a_successful_trial_restarts_the_shared_latency_from_its_own(redis_client):
    """The slow answers of a fault are not blended into the latency other processes read once a half-open
    trial has answered quickly: the EWMA starts again from the trial."""
    clock, a, b = _boards()

    async def steps(redis: PipelinedRedis) -> None:
        for _ in range(5):
            a.success(9, 3000.0)
        await sync_once(redis, a)
        for _ in range(3):
            a.failure(9)
        clock.advance(15)
        assert a.begin(9)
        a.success(9, 400.0)
        await sync_once(redis, a)
        await sync_once(redis, b)
        assert b.live(9).latency_ms == pytest.approx(400.0) and b.live(9).recovered

    _on_shared_redis(steps)
