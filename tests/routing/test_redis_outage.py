"""Redis down or restarted empty: 503 with Retry-After in each dialect, usage spooled and replayed once,
cached keys serve until the platform republishes (a gateway on a Redis of the test's own)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests

from contracts import redis_keys as rk
from contracts.apikey_format import generate_key
from routing.app import make_gateway_app
from sim.server import SimHandle
from tests.catalogs import sim_catalog
from tests.routing import harness
from tests.routing.conftest import add_fault
from tests.routing.harness import ServerThread, Tenant, make_tenant, publish_catalog
from tests.routing.own_redis import OwnRedis
from tests.waiting import wait_until

MSG = [{"role": "user", "content": "Say hello."}]
CALLS = {
    "openai": ("/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 5}),
    "anthropic": ("/v1/messages", {"model": "claude-haiku-4.5", "messages": MSG, "max_tokens": 5}),
    "responses": ("/v1/responses", {"model": "gpt-4.1-mini", "input": "Say hello.", "max_output_tokens": 16}),
}


@pytest.fixture
def own(tmp_path: Path, sim: SimHandle) -> Iterator[tuple[OwnRedis, ServerThread, Path]]:
    server_redis = OwnRedis()
    server_redis.start()
    client = redis.Redis.from_url(server_redis.url)
    publish_catalog(client, sim_catalog(sim.provider_url))
    client.set(rk.STATE_MARKER, "boot-1")
    spool = tmp_path / "spool"
    gateway = ServerThread(make_gateway_app(harness.test_config(redis_url=server_redis.url, spool_dir=str(spool))))
    requests.post(f"{sim.base_url}/_sim/reset", timeout=5)
    requests.delete(f"{sim.base_url}/_sim/faults", timeout=5)
    try:
        yield server_redis, gateway, spool
    finally:
        gateway.stop()
        client.close()
        server_redis.close()


def _post(gateway: ServerThread, key: str, path: str, body: dict[str, Any]) -> requests.Response:
    return requests.post(gateway.base_url + path, json=body, headers={"authorization": f"Bearer {key}"}, timeout=20)


def _stream_events(url: str) -> list[dict[str, object]]:
    client = redis.Redis.from_url(url)
    try:
        return harness.usage_events(client)
    finally:
        client.close()


def test_redis_down_answers_503_with_retry_after_in_every_dialect(own, sim):
    server_redis, gateway, _ = own
    tenant = make_tenant(redis.Redis.from_url(server_redis.url))
    assert _post(gateway, tenant.key, *CALLS["openai"]).status_code == 200  # key now cached in process
    server_redis.kill()
    for dialect, (path, body) in CALLS.items():
        for key in (tenant.key, generate_key(live=False)):  # a cached key and one the gateway never saw
            r = _post(gateway, key, path, body)
            assert r.status_code == 503, (dialect, r.status_code, r.text)
            assert int(r.headers["retry-after"]) >= 1
            assert r.json()["error"]["code"] == "service_unavailable", r.text
            assert (r.json().get("type") == "error") == (dialect == "anthropic"), r.text  # the caller's shape


def test_answered_calls_are_spooled_while_redis_is_down_and_replayed_once(own, sim):
    server_redis, gateway, spool = own
    client = redis.Redis.from_url(server_redis.url)
    tenant = make_tenant(client)
    # The provider takes a moment to start; Redis dies while the call is in flight, after admission.
    add_fault(sim, provider="openai", kind="stall_before_first_token", count=1, stall_s=100)  # 0.5 s real
    body = {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 5, "provider": {"only": ["openai"]}}
    answer: dict[str, requests.Response] = {}
    thread = threading.Thread(target=lambda: answer.update(r=_post(gateway, tenant.key, "/v1/chat/completions", body)))
    thread.start()
    wait_until(lambda: sim_in_flight(sim), timeout=5, message="the call never reached the provider")
    server_redis.kill()
    thread.join(timeout=20)
    assert answer["r"].status_code == 200, answer["r"].text
    request_id = answer["r"].headers["x-request-id"]
    spooled = wait_until(lambda: _spooled(spool), timeout=5, message="nothing spooled")
    assert request_id.encode() in spooled
    server_redis.start()  # back, empty (no persistence)
    events = wait_until(lambda: _stream_events(server_redis.url), timeout=10, message="spool not replayed")
    assert [e["request_id"] for e in events] == [request_id]
    assert events[0]["status"] == "ok" and events[0]["tokens"]
    wait_until(lambda: not _spooled(spool), timeout=5, message="replayed segment not removed")
    usage_spool = gateway.gateway.spool
    rounds = usage_spool.replay_rounds
    # Two more replay rounds (the first may have been under way): nothing is sent twice.
    wait_until(lambda: usage_spool.replay_rounds >= rounds + 2, timeout=10, message="the replay loop stopped")
    assert len(_stream_events(server_redis.url)) == 1


def sim_in_flight(sim: SimHandle) -> bool:
    r = requests.get(f"{sim.base_url}/_sim/requests?provider=openai&limit=1", timeout=5)
    return bool(r.json()["requests"])


def _spooled(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*.usage"))


def test_redis_restarted_empty_keeps_cached_keys_and_answers_503_until_republished(own, sim):
    server_redis, gateway, _ = own
    tenant = make_tenant(redis.Redis.from_url(server_redis.url))
    assert _post(gateway, tenant.key, *CALLS["openai"]).status_code == 200
    wait_until(lambda: gateway.gateway.refresher._marker == b"boot-1", timeout=5, message="marker not seen")
    server_redis.kill()
    server_redis.start()  # empty: no key records, no balances, no marker
    wait_until(lambda: gateway.gateway.keys.rebuilding, timeout=5, message="empty redis not detected")
    refused = _post(gateway, tenant.key, *CALLS["openai"])
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1", refused.text  # not 402
    stranger = generate_key(live=False)
    unknown = _post(gateway, stranger, *CALLS["openai"])
    assert unknown.status_code == 503, unknown.text  # maybe a key not republished yet: not 401
    republish(server_redis.url, tenant)
    wait_until(lambda: not gateway.gateway.keys.rebuilding, timeout=5, message="republish not seen")
    assert _post(gateway, tenant.key, *CALLS["openai"]).status_code == 200
    assert _post(gateway, stranger, *CALLS["openai"]).status_code == 401


def republish(url: str, tenant: Tenant) -> None:
    """What tokenway.state_rebuild does from the database: keys, balances, then the marker."""
    client = redis.Redis.from_url(url)
    client.set(rk.key_record(tenant.key_hash), tenant.record.to_json())
    client.set(rk.tenant_available(tenant.record.tenant_id), 10**9)
    client.set(rk.STATE_MARKER, "boot-2")
    client.close()
