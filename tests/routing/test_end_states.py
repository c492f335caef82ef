"""Every way a call can end, priced on purpose (docs/billing.md, "End states"): one test per row,
through the real gateway and the simulated providers (a tiny misbehaving provider for our own failure).

Each test checks what the tenant paid (the event's charge, the hold settled, the balance), what provider
cost was booked against what the simulator says it bills (its request log), and the end state itself.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import openai
import pytest
import redis
import requests

from contracts import redis_keys as rk
from contracts.pricing import charge_micros
from contracts.snapshot import CatalogSnapshot, ModelSnapshot
from routing.app import make_gateway_app
from tests.catalogs import sim_catalog
from tests.evaluation.upstream import misbehaving_upstream, offering
from tests.routing import harness
from tests.routing.conftest import add_fault, sim_requests
from tests.routing.harness import ServerThread, Tenant, make_tenant, publish_catalog
from tests.routing.own_redis import OwnRedis
from tests.waiting import wait_until

pytestmark = pytest.mark.cluster

BALANCE = 10**9  # make_tenant's
MSG = [{"role": "user", "content": "Tell me a story about caches."}]
ONLY_OPENAI = {"provider": {"only": ["openai"]}}


def _truth(sim: Any, provider: str) -> dict[str, Any]:
    """What the simulated provider generated and bills for its latest request."""
    return sim_requests(sim, provider, 1)[0]["sim"]


def _holds(tenant: Tenant) -> int:
    return int(tenant.client.hlen(rk.tenant_holds(tenant.record.tenant_id)))


def _assert_settled(tenant: Tenant, event: dict[str, Any]) -> None:
    # The event and the settlement are two writes of one pipelined tick; on a Redis Cluster they go to
    # different nodes, so the event can be read a moment before the settlement lands.
    wait_until(lambda: _holds(tenant) == 0, timeout=5, message="the hold settled")
    assert tenant.avail() == BALANCE - event["charge_micros"]


def _tenant_price(tenant: Tenant, cost: int) -> int:
    return charge_micros(cost_micros=cost, markup_bps=tenant.record.markup_bps, byok=False)


def _open_stream(port: int, key: str, body: dict[str, Any]) -> socket.socket:
    """A bare HTTP/1.1 client, so the test decides exactly when the caller hangs up."""
    payload = json.dumps({**body, "stream": True}).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n"
    )
    sock.sendall(head.encode() + payload)
    return sock


def test_completed_pays_the_provider_usage_and_records_finish_reason_and_upstream_id(gateway, sim, oai, tenant):
    stream = oai.chat.completions.create(
        model="gpt-4.1-mini",
        messages=MSG,
        max_tokens=60,
        stream=True,
        extra_body=ONLY_OPENAI,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    [event] = tenant.wait_events(1)
    truth = _truth(sim, "openai")
    assert event["end_state"] == "completed" and event["usage_source"] == "provider"
    assert event["tokens"]["output"] == truth["reported_usage"]["output"]
    assert event["cost_micros"] == truth["billed_cost_micros"] > 0  # booked as the provider bills
    assert event["charge_micros"] == _tenant_price(tenant, event["cost_micros"])
    finish = next(c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason)
    assert event["finish_reason"] == finish and event["upstream_id"].startswith("chatcmpl-")
    _assert_settled(tenant, event)


def test_client_cancelled_mid_stream_books_the_whole_generation_the_provider_bills(gateway, sim, tenant):
    # A pause half-way (0.5 s real) guarantees the caller leaves mid-answer; the provider finishes anyway.
    add_fault(sim, provider="openai", kind="stall_mid_stream", count=1, stall_s=100)
    body = {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 300, **ONLY_OPENAI}
    sock = _open_stream(gateway.port, tenant.key, body)
    received = b""
    while received.count(b"data:") < 3:
        received += sock.recv(65536)
    sock.close()
    [event] = tenant.wait_events(1, timeout=5)
    truth = _truth(sim, "openai")
    assert event["end_state"] == "client_cancelled" and event["usage_source"] == "provider"
    assert event["tokens"]["output"] == truth["reported_usage"]["output"]  # all of it, not what we relayed
    assert event["cost_micros"] == truth["billed_cost_micros"] > 0
    assert event["charge_micros"] == _tenant_price(tenant, event["cost_micros"])  # the tenant's choice to leave
    _assert_settled(tenant, event)


def test_upstream_cut_mid_stream_charges_nothing_and_books_what_was_delivered(gateway, sim, oai, tenant):
    add_fault(sim, provider="openai", kind="stream_cut", count=1)
    with pytest.raises(openai.APIError):
        for _ in oai.chat.completions.create(
            model="gpt-4.1-mini", messages=MSG, max_tokens=80, stream=True, extra_body=ONLY_OPENAI
        ):
            pass
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "upstream_cut" and event["usage_source"] == "estimated"
    assert event["charge_micros"] == 0 and "not_charged" in event["flags"]
    # The provider lost its usage chunk with the cut; what it sent is our estimate of what it bills.
    assert event["cost_micros"] > 0 and event["tokens"]["output"] > 0
    _assert_settled(tenant, event)


def test_upstream_error_before_the_first_byte_fails_over_and_bills_only_the_answer(gateway, sim, oai, tenant):
    add_fault(sim, provider="openai", kind="http_500", count=1)
    oai.chat.completions.create(
        model="gpt-4.1", messages=MSG, max_tokens=20, extra_body={"provider": {"order": ["openai", "openrouter"]}}
    )
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "completed" and event["attempts"] == 2 and event["provider"] == "openrouter"
    assert event["cost_micros"] == _truth(sim, "openrouter")["billed_cost_micros"]
    _assert_settled(tenant, event)


def test_upstream_error_on_every_attempt_charges_nothing(gateway, sim, oai, tenant):
    add_fault(sim, provider="openai", kind="http_500")
    with pytest.raises(openai.InternalServerError):
        oai.chat.completions.create(model="gpt-4.1-mini", messages=MSG, max_tokens=20, extra_body=ONLY_OPENAI)
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "upstream_error" and event["http_status"] == 502
    assert (event["cost_micros"], event["charge_micros"]) == (0, 0)
    _assert_settled(tenant, event)


def test_timeout_mid_stream_charges_nothing_and_books_what_was_delivered(gateway, sim, oai, tenant):
    add_fault(sim, provider="openai", kind="stall_mid_stream", count=1, stall_s=4000)  # 20 s > idle gap 1.5 s
    with pytest.raises(openai.APIError):
        for _ in oai.chat.completions.create(
            model="gpt-4.1-mini", messages=MSG, max_tokens=200, stream=True, extra_body=ONLY_OPENAI
        ):
            pass
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "upstream_timeout" and "upstream_timeout" in event["flags"]
    assert event["charge_micros"] == 0 and event["cost_micros"] > 0 and event["tokens"]["output"] > 0
    _assert_settled(tenant, event)


def test_timeout_before_the_first_byte_charges_and_books_nothing(gateway, sim, oai, tenant):
    add_fault(sim, provider="openai", kind="stall_before_first_token", stall_s=2000)
    with pytest.raises(openai.APIStatusError) as info:
        oai.chat.completions.create(model="gpt-4.1-mini", messages=MSG, max_tokens=20, extra_body=ONLY_OPENAI)
    assert info.value.status_code == 504
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "upstream_timeout"
    assert (event["cost_micros"], event["charge_micros"]) == (0, 0)
    _assert_settled(tenant, event)


def test_gateway_error_mid_stream_charges_nothing_and_books_what_was_delivered(gateway, redis_client, tenant):
    with misbehaving_upstream() as url:
        snapshot = sim_catalog("http://127.0.0.1:1")
        catalog = CatalogSnapshot(
            version=snapshot.version + 1,
            generated_at=time.time(),
            offerings=(*snapshot.offerings, offering(999, "garbage-chunk", url)),
            models=(*snapshot.models, ModelSnapshot("garbage-chunk")),
        )
        publish_catalog(redis_client, catalog)
        wait_until(lambda: "garbage-chunk" in gateway.gateway.catalog.by_model, timeout=5, message="catalog")
        # Anthropic caller, OpenAI provider: the translating converter chokes on the chunk that is not JSON.
        response = requests.post(
            f"{gateway.base_url}/v1/messages",
            headers={"x-api-key": tenant.key},
            json={"model": "garbage-chunk", "messages": MSG, "max_tokens": 20, "stream": True},
            timeout=10,
        )
    assert response.status_code == 200 and b"internal_error" in response.content  # in-band, after the first byte
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "gateway_error" and event["error_code"] == "internal_error"
    assert event["charge_micros"] == 0 and event["cost_micros"] > 0  # the provider did generate what it sent
    _assert_settled(tenant, event)


def test_client_gone_before_the_first_byte_charges_and_books_nothing(gateway, sim, tenant):
    add_fault(sim, provider="openai", kind="stall_before_first_token", stall_s=2000)  # 10 s real
    sock = _open_stream(gateway.port, tenant.key, {"model": "gpt-4.1-mini", "messages": MSG, **ONLY_OPENAI})
    wait_until(lambda: sim_requests(sim, "openai", 1), timeout=5, message="the request never reached the provider")
    sock.close()
    closed = time.monotonic()
    [event] = tenant.wait_events(1, timeout=3)
    assert time.monotonic() - closed < 1.0
    assert event["end_state"] == "client_gone_before_answer"
    assert (event["cost_micros"], event["charge_micros"]) == (0, 0)
    _assert_settled(tenant, event)


def test_client_gone_during_admission_releases_the_hold_at_once(sim, tmp_path):
    """Admission is held up by pausing our own Redis's writes; the caller hangs up meanwhile. The hold
    admission took is released as soon as the script has run, not by the reaper at expiry (660 s)."""
    own = OwnRedis()
    own.start()
    client = redis.Redis.from_url(own.url)
    server: ServerThread | None = None
    try:
        publish_catalog(client, sim_catalog(sim.provider_url))
        client.set(rk.STATE_MARKER, "boot-1")
        server = ServerThread(make_gateway_app(harness.test_config(redis_url=own.url, spool_dir=str(tmp_path))))
        wait_until(lambda: server.gateway.catalog.by_model, timeout=5, message="catalog")
        tenant = make_tenant(client)
        client.execute_command("CLIENT", "PAUSE", 5000, "WRITE")
        sock = _open_stream(server.port, tenant.key, {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 20})
        wait_until(lambda: _waiting_on_admission(client), timeout=5, message="admission never started")
        sock.close()
        wait_until(lambda: _disconnect_seen(server), timeout=5, message="the disconnect never reached the gateway")
        client.execute_command("CLIENT", "UNPAUSE")
        unpaused = time.monotonic()
        [event] = tenant.wait_events(1, timeout=3)
        assert time.monotonic() - unpaused < 1.0
        assert event["end_state"] == "client_gone_in_admission" and event["hold_micros"] > 0
        assert (event["cost_micros"], event["charge_micros"]) == (0, 0)
        _assert_settled(tenant, event)
    finally:
        client.execute_command("CLIENT", "UNPAUSE")
        if server is not None:
            server.stop()
        client.close()
        own.close()


def _waiting_on_admission(client: redis.Redis) -> bool:
    """A client of the paused server is blocked (flag b) on a script: the admission."""
    listing: Any = client.execute_command("CLIENT", "LIST")
    lines = (listing.decode() if isinstance(listing, bytes) else str(listing)).splitlines()
    return any(" flags=b " in line and " cmd=eval" in line for line in lines)


def _disconnect_seen(server: ServerThread) -> bool:
    """uvicorn dropped the caller's connection, which hands the app its ``http.disconnect``."""
    return not server.server.server_state.connections
