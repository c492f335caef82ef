"""A provider stalling before its first byte is left after a deadline from its measured TTFT, not the
60 s first-token timeout; the call fails over and only the answering offering is billed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import requests

from contracts import redis_keys as rk
from contracts.snapshot import OfferingStats, StatsSnapshot
from routing.app import make_gateway_app
from routing.failover.deadline import FLOOR_S
from sim.server import SimHandle
from tests.catalogs import sim_catalog
from tests.routing import harness
from tests.routing.conftest import add_fault
from tests.routing.harness import ServerThread, Tenant, make_tenant, publish_catalog
from tests.waiting import ManualClock, wait_until

ORDER = {"provider": {"order": ["openai", "openrouter"]}}
STALL_SIM_S = 20_000  # x the fleet's time scale (0.005): 100 s real, far past any deadline here
SLOW_TRIAL_SIM_S = 1_200  # 6 s real: within the normal deadline below (9 s), past a trial's (3 s)


@pytest.fixture
def patient_gateway(sim: SimHandle, redis_client: redis.Redis) -> Iterator[ServerThread]:
    """A gateway with production timeouts (60 s first token), so only the derived deadline can be quick."""
    publish_catalog(redis_client, sim_catalog(sim.provider_url))
    requests.post(f"{sim.base_url}/_sim/reset", timeout=5)
    requests.delete(f"{sim.base_url}/_sim/faults", timeout=5)
    server = ServerThread(make_gateway_app(harness.test_config(first_token_timeout_s=60.0, deadline_s=120.0)))
    wait_until(lambda: server.gateway.catalog.by_model, timeout=5, message="catalog")
    server.gateway.hedging.share = 0.0  # the deadline alone; a hedge before it: test_hedging.py
    yield server
    server.stop()


def _publish_ttft(server: ServerThread, client: redis.Redis, p90_ms: float, p50_ms: float | None = None) -> None:
    offerings = [o for o in server.gateway.catalog.by_model["gpt-4.1"] if o.provider == "openai"]
    p50 = p90_ms / 2 if p50_ms is None else p50_ms
    stats = {
        str(o.offering_id): OfferingStats(o.offering_id, n=200, ttft_p50_ms=p50, ttft_p90_ms=p90_ms) for o in offerings
    }
    stamp = time.time()
    client.set(rk.STATS_SNAPSHOT, StatsSnapshot(1, stamp, "1h", {"all": stats}).to_json())
    client.incr(rk.STATS_VERSION)
    client.publish(rk.SNAPSHOT_CHANNEL, "stats")
    catalog = server.gateway.catalog
    wait_until(lambda: catalog.stats is not None and catalog.stats.generated_at == stamp, timeout=5, message="stats")


@pytest.mark.parametrize("stream", [True, False])
def test_a_stall_fails_over_after_the_measured_deadline_and_bills_once(patient_gateway, sim, redis_client, stream):
    tenant = make_tenant(redis_client)
    _publish_ttft(patient_gateway, redis_client, p90_ms=300)  # deadline: the 2 s floor
    add_fault(sim, provider="openai", kind="stall_before_first_token", count=1, stall_s=STALL_SIM_S)
    body = {
        "model": "gpt-4.1",
        "messages": [{"role": "user", "content": "Hi"}],
        "max_tokens": 5,
        "stream": stream,
        **ORDER,
    }
    handled_before = _handled()
    r, took = _timed_chat(patient_gateway, tenant, body)
    assert r.status_code == 200, r.text
    assert r.headers["x-tokenway-provider"] == "openrouter"
    # Whole answers add max_tokens / 25 tokens/s (0.2 s here) to the first-byte deadline.
    assert FLOOR_S <= took < FLOOR_S + 3, took
    [event] = tenant.wait_events(1)
    assert event["provider"] == "openrouter" and event["attempts"] == 2 and event["status"] == "ok"
    # The call's handler has ended (counted after its accounting): no later event can come from it.
    wait_until(lambda: _handled() > handled_before, timeout=5, message="the call's handler did not end")
    assert len(tenant.events()) == 1  # billed once, for the answering offering


def test_a_half_open_trial_that_is_still_slow_fails_over_at_twice_the_median(patient_gateway, sim, redis_client):
    """A slowdown's samples inflate the p90 first (here: a 9 s deadline); the breaker's trial gets twice the
    median (3 s), so a trial that is still slow is a failure and the breaker stays open."""
    tenant = make_tenant(redis_client)
    _publish_ttft(patient_gateway, redis_client, p90_ms=3000, p50_ms=1500)
    health, clock = patient_gateway.gateway.health, ManualClock(time.time())
    health.set_clock(clock)
    [openai] = [o.offering_id for o in patient_gateway.gateway.catalog.by_model["gpt-4.1"] if o.provider == "openai"]
    try:
        for _ in range(3):
            health.failure(openai)
        clock.advance(15)  # half-open: the next attempt on it is the trial
        add_fault(sim, provider="openai", kind="stall_before_first_token", count=1, stall_s=SLOW_TRIAL_SIM_S)
        body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5, **ORDER}
        r, took = _timed_chat(patient_gateway, tenant, body)
        assert r.status_code == 200 and r.headers["x-tokenway-provider"] == "openrouter", r.text
        assert 3.0 <= took < 3.0 + 2, took  # the trial's deadline (+ 0.2 s for a whole answer), not the stall's 6 s
        assert not health.available(openai) and not health.live(openai).recovered  # open again
    finally:
        health.set_clock(time.time)


def _timed_chat(gateway: ServerThread, tenant: Tenant, body: dict[str, Any]) -> tuple[requests.Response, float]:
    """A chat completion through ``gateway`` and the seconds it took, whole."""
    started = time.monotonic()
    response = requests.post(
        f"{gateway.base_url}/v1/chat/completions",
        json=body,
        timeout=90,
        headers={"authorization": f"Bearer {tenant.key}"},
    )
    return response, time.monotonic() - started


def _handled() -> float:
    """Chat calls answered 200 whose handler has ended (routing.telemetry.metrics, this process's gateways)."""
    from routing.telemetry.metrics import GATEWAY_REGISTRY

    labels = {"endpoint": "/v1/chat/completions", "status": "200"}
    return GATEWAY_REGISTRY.get_sample_value("tokenway_gateway_requests_total", labels) or 0.0
