"""Failover before the first byte, never after; breaker; cooldowns; deadlines; client disconnect."""

from __future__ import annotations

import time

import anthropic
import openai
import pytest
import requests

from routing.hedging.loser import LOSER_SUFFIX
from sim.server import start_in_thread
from tests.catalogs import sim_catalog
from tests.routing.conftest import add_fault, calm_profiles, sim_requests
from tests.routing.harness import publish_catalog
from tests.waiting import wait_until

MSG = [{"role": "user", "content": "Tell me a story about caches."}]
ORDER = {"provider": {"order": ["openai", "openrouter"]}}


def _openai_available(gateway) -> bool:
    """The gateway's own health board: openai's gpt-4.1 offering may be tried again (closed or half-open)."""
    board, catalog = gateway.gateway.health, gateway.gateway.catalog
    return all(board.available(o.offering_id) for o in catalog.by_model["gpt-4.1"] if o.provider == "openai")


def _serves_from(gateway, base_url: str) -> bool:
    offerings = gateway.gateway.catalog.by_id.values()
    return bool(offerings) and all(o.base_url.startswith(base_url) for o in offerings)


def _create(oai, **kwargs):
    return oai.chat.completions.with_raw_response.create(
        model="gpt-4.1", messages=MSG, max_tokens=40, extra_body=ORDER, **kwargs
    )


@pytest.mark.parametrize(
    "kind",
    [
        "connection_refused",
        "connection_reset",
        "http_500",
        "http_502",
        "http_503",
        "http_529",
        "http_429",
        "stall_before_first_token",
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_fails_over_to_next_offering_before_first_byte(gateway, sim, oai, tenant, kind, stream):
    add_fault(sim, provider="openai", kind=kind, count=1, stall_s=2000)
    raw = _create(oai, stream=stream)
    result = raw.parse()
    text = (
        "".join(c.choices[0].delta.content or "" for c in result if c.choices)
        if stream
        else result.choices[0].message.content
    )
    assert text
    assert raw.headers["x-tokenway-provider"] == "openrouter"
    # A stalled stream is left for the next offering by the first-byte timeout, or sooner by a hedge
    # when the gateway has a live TTFT for openai (an earlier test's, shared through Redis).
    hedged = kind == "stall_before_first_token" and stream
    assert raw.headers["x-tokenway-route"] in ({"order+failover", "order+hedge"} if hedged else {"order+failover"})
    events = tenant.wait_events(1)
    [event] = [e for e in events if not e["request_id"].endswith(LOSER_SUFFIX)]
    assert event["attempts"] == 2 and event["provider"] == "openrouter" and event["status"] == "ok"


def test_429_retry_after_cools_the_offering_down(gateway, sim, oai):
    add_fault(sim, provider="openai", kind="http_429", count=1)
    assert _create(oai).headers["x-tokenway-provider"] == "openrouter"
    second = _create(oai)
    assert second.headers["x-tokenway-provider"] == "openrouter"
    assert second.headers["x-tokenway-route"] == "order"  # openai was skipped, not tried
    assert len(sim_requests(sim, "openai", 10)) == 1
    wait_until(lambda: _openai_available(gateway), timeout=5, message="openai still cooling down after Retry-After: 1")
    assert _create(oai).headers["x-tokenway-provider"] == "openai"


def test_breaker_opens_after_consecutive_failures_then_half_opens(gateway, sim, oai):
    add_fault(sim, provider="openai", kind="http_500", count=3)
    for _ in range(3):
        assert _create(oai).headers["x-tokenway-provider"] == "openrouter"
    assert _create(oai).headers["x-tokenway-provider"] == "openrouter"
    assert len(sim_requests(sim, "openai", 10)) == 3  # open: not even tried
    # cooldown 0.5 s -> half-open trial, which succeeds and closes the breaker
    wait_until(lambda: _openai_available(gateway), timeout=5, message="openai's breaker never half-opened")
    assert _create(oai).headers["x-tokenway-provider"] == "openai"
    assert _create(oai).headers["x-tokenway-provider"] == "openai"


def test_stream_cut_after_first_byte_ends_with_in_band_error_and_no_retry(gateway, sim, oai, tenant):
    add_fault(sim, provider="openai", kind="stream_cut", count=1)
    stream = oai.chat.completions.create(model="gpt-4.1", messages=MSG, max_tokens=200, stream=True, extra_body=ORDER)
    with pytest.raises(openai.APIError) as info:
        for _ in stream:
            pass
    assert "stream" in str(info.value.message)
    assert sim_requests(sim, "openrouter", 10) == []
    [event] = tenant.wait_events(1)
    assert event["status"] == "upstream_error" and event["attempts"] == 1


def test_anthropic_stream_cut_is_an_error_event(gateway, sim, claude):
    add_fault(sim, provider="anthropic", kind="stream_cut", count=1)
    with (
        pytest.raises(anthropic.APIStatusError),
        claude.messages.stream(model="claude-haiku-4.5", max_tokens=200, messages=MSG) as stream,
    ):
        for _ in stream:
            pass


def test_idle_gap_mid_stream_is_bounded(gateway, sim, oai):
    add_fault(sim, provider="openai", kind="stall_mid_stream", count=1, stall_s=4000)
    started = time.monotonic()
    with pytest.raises(openai.APIError):
        for _ in oai.chat.completions.create(
            model="gpt-4.1", messages=MSG, max_tokens=200, stream=True, extra_body=ORDER
        ):
            pass
    assert time.monotonic() - started < 3.0  # idle timeout 1.5 s


def test_slow_drip_does_not_outlive_the_deadline(gateway, redis_client, oai, tenant, tmp_path):
    slow = start_in_thread(seed=3, time_scale=1.0, profiles=calm_profiles(tmp_path))
    try:
        publish_catalog(redis_client, sim_catalog(slow.provider_url))
        wait_until(lambda: _serves_from(gateway, slow.base_url), timeout=5, message="the gateway kept the old catalog")
        requests.post(f"{slow.base_url}/_sim/faults", json={"provider": "openai", "kind": "slow_drip"}, timeout=5)
        started = time.monotonic()
        with pytest.raises(openai.APIError):
            for _ in oai.chat.completions.create(model="gpt-4.1-mini", messages=MSG, max_tokens=2000, stream=True):
                pass
        assert 5.0 < time.monotonic() - started < 7.5  # deadline 6 s, each gap well under the idle timeout
        [event] = tenant.wait_events(1)
        assert event["status"] == "upstream_error" and event["tokens"]["output"] > 0
    finally:
        slow.stop()


def _raw_stream_request(gateway, key, body):
    """A bare HTTP/1.1 client: send, read the first bytes, and let the caller close the socket."""
    import json
    import socket

    payload = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=5)
    head = f"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n"
    sock.sendall(head.encode() + payload)
    return sock


def test_client_disconnect_cancels_upstream_and_records_usage(gateway, sim, tenant):
    add_fault(sim, provider="openai", kind="stall_mid_stream", count=1, stall_s=4000)
    sock = _raw_stream_request(
        gateway, tenant.key, {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 200, "stream": True}
    )
    received = b""
    while received.count(b"data:") < 5:
        received += sock.recv(65536)
    assert received.startswith(b"HTTP/1.1 200")
    sock.close()
    closed = time.monotonic()
    [event] = tenant.wait_events(1, timeout=4)
    # The rest of the stream is read for the provider's usage (routing/handoff/drain.py), bounded by the idle
    # gap (1.5 s): the stall (20 s) was not waited out.
    assert time.monotonic() - closed < 2.5
    assert event["status"] == "client_cancelled" and event["end_state"] == "client_cancelled"
    assert event["tokens"]["input_uncached"] > 0 and event["tokens"]["output"] > 0
    assert event["usage_source"] == "estimated" and event["charge_micros"] > 0
    assert tenant.client.hlen(f"tw:{{t{tenant.record.tenant_id}}}:holds") == 0
