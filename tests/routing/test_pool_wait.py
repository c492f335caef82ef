"""Waiting for an upstream slot: bounded, its own 503 with Retry-After, never a breaker failure.

A gateway capped at one request in flight per upstream host (the whole simulated fleet is one
host): while one stream holds the slot, the next request waits ``pool_wait_s`` and is refused
with ``gateway_busy``; the offerings' breakers stay closed; once the slot frees, requests pass.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import openai
import pytest
import requests

from routing.app import make_gateway_app
from tests.routing.conftest import add_fault
from tests.routing.harness import ServerThread
from tests.routing.harness import test_config as gateway_config
from tests.waiting import wait_until

MSG = [{"role": "user", "content": "Tell me a story about caches."}]
POOL_WAIT_S = 0.3


@pytest.fixture
def capped(gateway: ServerThread) -> Iterator[ServerThread]:
    server = ServerThread(make_gateway_app(gateway_config(upstream_per_host_limit=1, pool_wait_s=POOL_WAIT_S)))
    wait_until(lambda: server.gateway.catalog.by_model, timeout=5, message="the capped gateway has no catalog")
    yield server
    server.stop()


def _hold_a_stream(server: ServerThread, key: str) -> socket.socket:
    """Open a stream (the provider stalls mid-way) and read until it is relaying: it holds the slot."""
    payload = json.dumps({"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 200, "stream": True}).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n"
    )
    sock.sendall(head.encode() + payload)
    received = b""
    while received.count(b"data:") < 2:
        received += sock.recv(65536)
    assert received.startswith(b"HTTP/1.1 200")
    return sock


def _client(server: ServerThread, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.base_url}/v1", api_key=key, max_retries=0, timeout=20)


def test_a_full_pool_is_a_503_with_retry_after_and_no_breaker_opens(capped, sim, tenant):
    add_fault(sim, provider="*", kind="stall_mid_stream", count=1, stall_s=4000)
    holder = _hold_a_stream(capped, tenant.key)
    client = _client(capped, tenant.key)
    started = time.monotonic()
    with pytest.raises(openai.APIStatusError) as refused:
        client.chat.completions.create(model="gpt-4.1-mini", messages=MSG, max_tokens=20)
    waited = time.monotonic() - started
    assert refused.value.status_code == 503
    assert refused.value.response.headers["retry-after"] == "1"
    assert refused.value.code == "gateway_busy"
    attempts = capped.gateway.pool_stats().wait_timeouts
    assert attempts >= 1 and POOL_WAIT_S * attempts <= waited < POOL_WAIT_S * attempts + 1.0

    board = capped.gateway.health
    offerings = capped.gateway.catalog.by_model["gpt-4.1-mini"]
    assert all(board.available(o.offering_id) and board.get(o.offering_id).consecutive_failures == 0 for o in offerings)

    health = requests.get(f"{capped.base_url}/healthz", timeout=5).json()
    assert health["upstream"]["wait_timeouts_total"] == attempts and health["upstream"]["per_host_limit"] == 1
    assert health["open_streams"] == 1 and health["upstream"]["in_flight"] == 1

    holder.close()
    wait_until(lambda: capped.gateway.pool_stats().in_flight == 0, timeout=5, message="the slot was not given back")
    answer = client.chat.completions.create(model="gpt-4.1-mini", messages=MSG, max_tokens=20)
    assert answer.choices[0].message.content


def test_a_wait_that_gets_a_slot_in_time_is_served(gateway, sim, tenant):
    server = ServerThread(make_gateway_app(gateway_config(upstream_per_host_limit=1, pool_wait_s=5.0)))
    try:
        wait_until(lambda: server.gateway.catalog.by_model, timeout=5, message="no catalog")
        add_fault(sim, provider="*", kind="stall_mid_stream", count=1, stall_s=200)  # 1 s at the test time scale
        holder = _hold_a_stream(server, tenant.key)
        answer = _client(server, tenant.key).chat.completions.create(model="gpt-4.1-mini", messages=MSG, max_tokens=20)
        assert answer.choices[0].message.content
        stats = server.gateway.pool_stats()
        assert stats.waited >= 1 and stats.wait_timeouts == 0
        holder.close()
    finally:
        server.stop()


def test_healthz_reports_the_raised_descriptor_ceiling(gateway):
    import resource

    body = requests.get(f"{gateway.base_url}/healthz", timeout=5).json()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert body["fd_limit"] == soft  # the gateway raised this process's soft limit at start
    assert hard == resource.RLIM_INFINITY or soft == hard
    assert body["stream_ceiling"] == (soft - 64) // 2 and body["open_fds"] > 0
    assert body["upstream"]["per_host_limit"] is None  # no fixed cap unless an operator sets one
