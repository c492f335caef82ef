"""Hedged first bytes through the real gateway and the simulated fleet: a provider stalling before
its first byte is hedged after its p95 TTFT, the second candidate answers well before the first-byte
deadline, the stalled request is cancelled upstream and booked as provider cost only, and the
tenant's hedge budget stops hedging when spent."""

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
from routing.hedging.loser import LOSER_SUFFIX
from sim.server import SimHandle
from tests.catalogs import sim_catalog
from tests.routing import harness
from tests.routing.conftest import add_fault, sim_requests
from tests.routing.harness import ServerThread, Tenant, make_tenant, publish_catalog
from tests.waiting import wait_until

pytestmark = pytest.mark.cluster

ORDER = {"provider": {"order": ["openai", "openrouter"]}}
STALL_SIM_S = 20_000  # x the fleet's time scale (0.005): 100 s real, far past any deadline here
P90_MS = 300.0  # published for openai: p95 ≈ 375 ms is the hedge delay; the first-byte deadline is the 2 s floor


@pytest.fixture
def hedging_gateway(sim: SimHandle, redis_client: redis.Redis) -> Iterator[ServerThread]:
    """Production timeouts (60 s first token), so only the hedge or the derived deadline can be quick."""
    publish_catalog(redis_client, sim_catalog(sim.provider_url))
    requests.post(f"{sim.base_url}/_sim/reset", timeout=5)
    requests.delete(f"{sim.base_url}/_sim/faults", timeout=5)
    server = ServerThread(make_gateway_app(harness.test_config(first_token_timeout_s=60.0, deadline_s=120.0)))
    wait_until(lambda: server.gateway.catalog.by_model, timeout=5, message="catalog")
    _publish_ttft(server, redis_client)
    yield server
    server.stop()


def _publish_ttft(server: ServerThread, client: redis.Redis) -> None:
    offerings = [o for o in server.gateway.catalog.by_model["gpt-4.1"] if o.provider == "openai"]
    stats = {
        str(o.offering_id): OfferingStats(o.offering_id, n=200, ttft_p50_ms=P90_MS / 2, ttft_p90_ms=P90_MS)
        for o in offerings
    }
    stamp = time.time()
    client.set(rk.STATS_SNAPSHOT, StatsSnapshot(1, stamp, "1h", {"all": stats}).to_json())
    client.incr(rk.STATS_VERSION)
    client.publish(rk.SNAPSHOT_CHANNEL, "stats")
    catalog = server.gateway.catalog
    wait_until(lambda: catalog.stats is not None and catalog.stats.generated_at == stamp, timeout=5, message="stats")


def _ask(server: ServerThread, tenant: Tenant) -> tuple[requests.Response, float]:
    body: dict[str, Any] = {
        "model": "gpt-4.1",
        "messages": [{"role": "user", "content": "Hi"}],
        "max_tokens": 5,
        "stream": True,
        **ORDER,
    }
    started = time.monotonic()
    answer = requests.post(
        f"{server.base_url}/v1/chat/completions",
        json=body,
        timeout=90,
        headers={"authorization": f"Bearer {tenant.key}"},
    )
    return answer, time.monotonic() - started


def test_a_stalled_offering_is_hedged_the_second_answers_and_the_loser_is_cancelled_and_booked(
    hedging_gateway, sim, redis_client
):
    tenant = make_tenant(redis_client)
    add_fault(sim, provider="openai", kind="stall_before_first_token", count=1, stall_s=STALL_SIM_S)
    answer, took = _ask(hedging_gateway, tenant)
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-tokenway-provider"] == "openrouter"
    assert "+hedge" in answer.headers["x-tokenway-route"]
    assert 0.3 < took < FLOOR_S / 2, took  # after the p95 (375 ms), well before the 2 s deadline
    print(f"hedged answer after {took:.3f} s")
    assert answer.text.rstrip().endswith("data: [DONE]")
    # The stalled request was cancelled upstream: the fleet saw its caller leave during the stall.
    wait_until(
        lambda: (sim_requests(sim, "openai")[0].get("sim") or {}).get("client_gone"),
        timeout=10,
        message="the stalled provider saw the hedged-away request's connection close",
    )
    events = {e["request_id"]: e for e in tenant.wait_events(2)}
    [call] = [e for e in events.values() if not e["request_id"].endswith(LOSER_SUFFIX)]
    loser = events[call["request_id"] + LOSER_SUFFIX]
    assert call["provider"] == "openrouter" and call["status"] == "ok" and call["charge_micros"] > 0
    assert loser["provider"] == "openai" and loser["end_state"] == "hedge_cancelled"
    assert loser["charge_micros"] == 0 and loser["cost_micros"] > 0 and loser["hold_id"] is None
    assert hedging_gateway.gateway.hedging.counts == {"late": 1, "hedged": 1, "cancelled": 1}


def test_the_hedge_budget_stops_hedging_when_spent(hedging_gateway, sim, redis_client):
    tenant = make_tenant(redis_client)
    add_fault(sim, provider="openai", kind="stall_before_first_token", count=2, stall_s=STALL_SIM_S)
    minute = int(time.time() // 60)
    first, quick = _ask(hedging_gateway, tenant)
    second, slow = _ask(hedging_gateway, tenant)  # 2 requests in the last 60 s: 0.05 x 2 + 1 allows one hedge
    assert first.status_code == second.status_code == 200
    assert quick < FLOOR_S / 2 <= FLOOR_S <= slow, (quick, slow)  # the second waited for the deadline
    print(f"budget: hedged {quick:.3f} s, budget spent {slow:.3f} s")
    assert "+hedge" not in second.headers["x-tokenway-route"]
    assert second.headers["x-tokenway-provider"] == "openrouter"  # plain failover after the deadline
    assert hedging_gateway.gateway.hedging.counts == {"late": 2, "hedged": 1, "cancelled": 1}
    hedges = [int(redis_client.get(rk.hedge_window(tenant.record.tenant_id, m)) or 0) for m in (minute, minute + 1)]
    assert sum(hedges) == 1, hedges  # the budget slides: a minute's boundary between the calls renews nothing


def test_a_caller_leaving_during_a_hedged_race_cancels_both_attempts(hedging_gateway, sim, redis_client):
    tenant = make_tenant(redis_client)
    for provider in ("openai", "openrouter"):
        add_fault(sim, provider=provider, kind="stall_before_first_token", count=1, stall_s=STALL_SIM_S)
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Hi"}], "stream": True, **ORDER}
    with pytest.raises(requests.exceptions.ReadTimeout):  # we leave after the hedge, before any first byte
        requests.post(
            f"{hedging_gateway.base_url}/v1/chat/completions",
            json=body,
            timeout=(5, 1.0),
            headers={"authorization": f"Bearer {tenant.key}"},
        )

    def both_gone() -> bool:
        return all((sim_requests(sim, p)[0].get("sim") or {}).get("client_gone") for p in ("openai", "openrouter"))

    wait_until(both_gone, timeout=10, message="both stalled providers saw their connection close")
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "client_gone_before_answer" and event["charge_micros"] == 0
    assert hedging_gateway.gateway.hedging.counts["cancelled"] == 0  # no winner: nothing booked as a loser


def test_a_stalled_first_byte_on_a_models_only_offering_is_retried_on_a_second_connection(
    hedging_gateway, sim, redis_client
):
    """gpt-4.1-mini has one offering (openai): the hedge is a second request to it, not a 504."""
    [only] = hedging_gateway.gateway.catalog.by_model["gpt-4.1-mini"]
    stats = {str(only.offering_id): OfferingStats(only.offering_id, n=200, ttft_p50_ms=P90_MS / 2, ttft_p90_ms=P90_MS)}
    stamp = time.time()
    redis_client.set(rk.STATS_SNAPSHOT, StatsSnapshot(2, stamp, "1h", {"all": stats}).to_json())
    redis_client.incr(rk.STATS_VERSION)
    redis_client.publish(rk.SNAPSHOT_CHANNEL, "stats")
    catalog = hedging_gateway.gateway.catalog
    wait_until(lambda: catalog.stats is not None and catalog.stats.generated_at == stamp, timeout=5, message="stats")
    tenant = make_tenant(redis_client)
    add_fault(sim, provider="openai", kind="stall_before_first_token", count=1, stall_s=STALL_SIM_S)
    started = time.monotonic()
    answer = requests.post(
        f"{hedging_gateway.base_url}/v1/chat/completions",
        json={
            "model": "gpt-4.1-mini",
            "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 5,
            "stream": True,
        },
        timeout=90,
        headers={"authorization": f"Bearer {tenant.key}"},
    )
    took = time.monotonic() - started
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-tokenway-provider"] == "openai" and "+hedge" in answer.headers["x-tokenway-route"]
    assert 0.3 < took < FLOOR_S / 2, took  # after the p95 (375 ms), long before the first-byte deadline's 504
    print(f"only offering: second connection answered after {took:.3f} s")
    assert answer.text.rstrip().endswith("data: [DONE]")
    wait_until(
        lambda: any((r.get("sim") or {}).get("client_gone") for r in sim_requests(sim, "openai")),
        timeout=10,
        message="the stalled first connection was closed",
    )
    events = {e["request_id"]: e for e in tenant.wait_events(2)}
    [call] = [e for e in events.values() if not e["request_id"].endswith(LOSER_SUFFIX)]
    loser = events[call["request_id"] + LOSER_SUFFIX]
    assert call["provider"] == loser["provider"] == "openai" and call["status"] == "ok"
    assert loser["end_state"] == "hedge_cancelled" and loser["charge_micros"] == 0
    assert hedging_gateway.gateway.hedging.counts == {"late": 1, "hedged": 1, "cancelled": 1}
