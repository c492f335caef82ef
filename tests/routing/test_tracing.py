"""Optional OpenTelemetry traces, seen as an operator's collector sees them: the real gateway (uvicorn,
real Redis, the simulated fleet) exports over OTLP/HTTP to a real receiver on loopback that decodes
the protobuf requests. One trace per call with its admission, routing, attempts and settlement;
failovers as separate attempts; a caller's traceparent continued; no key or prompt text anywhere;
nothing at all when traces are off."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import redis
import requests

from contracts import jsonlog
from routing.app import make_gateway_app
from sim.server import SimHandle
from tests.catalogs import sim_catalog
from tests.routing import harness
from tests.routing.conftest import add_fault, sim_requests
from tests.routing.harness import ServerThread, Tenant, make_tenant, publish_catalog
from tests.routing.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.routing.test_hedging import STALL_SIM_S
from tests.routing.test_hedging import _publish_ttft as publish_ttft
from tests.waiting import wait_until

ORDER = {"provider": {"order": ["openai", "openrouter"]}}
PROMPT = "Tell me about lighthouses, marker-7f3a91"  # must never appear in a span
CALL_SPANS = {"POST /v1/chat/completions", "routing decision", "admission", "upstream attempt", "settlement"}
OTEL_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SDK_DISABLED")


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    server = OtlpReceiver()
    yield server
    server.stop()


def _traced_app(receiver: OtlpReceiver, **config: Any) -> Any:
    """The app as an operator configures it: the standard variables, read when the app is made."""
    saved = {name: os.environ.get(name) for name in (*OTEL_VARS, "OTEL_BSP_SCHEDULE_DELAY", "OTEL_SERVICE_NAME")}
    os.environ.update(
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY="50",
        OTEL_SERVICE_NAME="tokenway-gateway-test",
    )
    os.environ.pop("OTEL_SDK_DISABLED", None)
    try:
        return make_gateway_app(harness.test_config(**config))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _serve(app: Any, sim: SimHandle, client: redis.Redis) -> ServerThread:
    publish_catalog(client, sim_catalog(sim.provider_url))
    requests.post(f"{sim.base_url}/_sim/reset", timeout=5)
    requests.delete(f"{sim.base_url}/_sim/faults", timeout=5)
    server = ServerThread(app)
    wait_until(lambda: server.gateway.catalog.by_model, timeout=5, message="catalog")
    return server


@pytest.fixture
def traced(receiver: OtlpReceiver, sim: SimHandle, redis_client: redis.Redis) -> Iterator[ServerThread]:
    server = _serve(_traced_app(receiver), sim, redis_client)
    yield server
    server.stop()


def _ask(server: ServerThread, tenant: Tenant, *, stream: bool = False, **headers: str) -> requests.Response:
    body: dict[str, Any] = {"model": "gpt-4.1", "messages": [{"role": "user", "content": PROMPT}], "max_tokens": 20,
            "stream": stream, **ORDER}  # fmt: skip
    answer = requests.post(
        f"{server.base_url}/v1/chat/completions",
        json=body,
        timeout=30,
        headers={"authorization": f"Bearer {tenant.key}", **headers},
    )
    assert answer.status_code == 200, answer.text
    return answer


def _by_name(spans: list[ReceivedSpan]) -> dict[str, list[ReceivedSpan]]:
    named: dict[str, list[ReceivedSpan]] = {}
    for span in spans:
        named.setdefault(span.name, []).append(span)
    return named


def _one_call(receiver: OtlpReceiver, answer: requests.Response, *, count: int) -> dict[str, list[ReceivedSpan]]:
    spans = receiver.received.trace_of(answer.headers["x-request-id"], count=count)
    named = _by_name(spans)
    [server] = named["POST /v1/chat/completions"]
    assert server.kind == "server" and server.service == "tokenway-gateway-test"
    for span in spans:  # one tree: every other span's parent is in this trace
        assert span is server or span.parent_span_id in {s.span_id for s in spans}, span.name
    return named


@pytest.mark.parametrize("stream", [False, True])
def test_a_call_is_one_trace_with_admission_routing_its_attempt_and_settlement(traced, receiver, redis_client, stream):
    tenant = make_tenant(redis_client)
    answer = _ask(traced, tenant, stream=stream)
    named = _one_call(receiver, answer, count=6)
    assert CALL_SPANS | {"usage hand-off"} <= set(named), sorted(named)
    [server] = named["POST /v1/chat/completions"]
    for child in ("routing decision", "admission", "upstream attempt", "usage hand-off", "settlement"):
        [span] = named[child]
        assert span.parent_span_id == server.span_id, child
    attrs = server.attributes
    assert attrs["tokenway.request_id"] == answer.headers["x-request-id"]
    assert attrs["tokenway.tenant_id"] == tenant.record.tenant_id
    assert attrs["tokenway.provider"] == answer.headers["x-tokenway-provider"] == "openai"
    assert attrs["tokenway.offering"] == answer.headers["x-tokenway-offering"]
    assert attrs["tokenway.model"] == "gpt-4.1" and attrs["tokenway.region"] == "beijing"
    assert attrs["tokenway.stream"] is stream and attrs["tokenway.end_state"] == "completed"
    assert attrs["http.response.status_code"] == 200 and attrs["http.route"] == "/v1/chat/completions"
    assert attrs["tokenway.ttft_ms"] > 0
    [attempt] = named["upstream attempt"]
    assert attempt.kind == "client"
    assert attempt.attributes["tokenway.attempt.kind"] == "first" and attempt.attributes["tokenway.attempt.number"] == 1
    assert attempt.attributes["tokenway.attempt.outcome"] == "opened"
    [(event, event_attrs)] = attempt.events
    assert event == "first_byte" and event_attrs["tokenway.ttfb_ms"] > 0


def test_a_failover_shows_two_attempts_the_failed_one_with_its_kind(traced, receiver, sim, redis_client):
    tenant = make_tenant(redis_client)
    add_fault(sim, provider="openai", kind="http_500", count=1)
    answer = _ask(traced, tenant)
    assert answer.headers["x-tokenway-route"] == "order+failover"
    named = _one_call(receiver, answer, count=7)
    failed, served = sorted(named["upstream attempt"], key=lambda s: s.attributes["tokenway.attempt.number"])
    assert failed.attributes["tokenway.provider"] == "openai" and failed.attributes["tokenway.attempt.kind"] == "first"
    assert failed.attributes["tokenway.attempt.outcome"] == "http_5xx" and failed.status_code == 2
    assert failed.attributes["http.response.status_code"] == 500 and failed.events == []
    assert served.attributes["tokenway.provider"] == "openrouter"
    assert (
        served.attributes["tokenway.attempt.kind"] == "failover" and served.attributes["tokenway.attempt.number"] == 2
    )
    assert [name for name, _ in served.events] == ["first_byte"]
    assert failed.end_ns <= served.start_ns
    [server] = named["POST /v1/chat/completions"]
    assert server.attributes["tokenway.attempts"] == 2 and server.attributes["tokenway.provider"] == "openrouter"


def test_a_hedge_is_its_own_attempt_and_the_loser_is_cancelled(receiver, sim, redis_client):
    server = _serve(_traced_app(receiver, first_token_timeout_s=60.0, deadline_s=120.0), sim, redis_client)
    try:
        publish_ttft(server, redis_client)  # openai's p95 TTFT ~375 ms: a stall past it is hedged
        add_fault(sim, provider="openai", kind="stall_before_first_token", count=1, stall_s=STALL_SIM_S)
        answer = _ask(server, make_tenant(redis_client), stream=True)
    finally:
        server.stop()
    assert "+hedge" in answer.headers["x-tokenway-route"]
    named = _one_call(receiver, answer, count=7)
    attempts = {s.attributes["tokenway.attempt.kind"]: s for s in named["upstream attempt"]}
    assert set(attempts) == {"first", "hedge"}
    assert attempts["first"].attributes["tokenway.provider"] == "openai"
    assert attempts["first"].attributes["tokenway.attempt.outcome"] == "cancelled"
    assert attempts["hedge"].attributes["tokenway.provider"] == "openrouter"
    assert attempts["hedge"].attributes["tokenway.attempt.outcome"] == "opened"
    assert attempts["first"].start_ns < attempts["hedge"].start_ns < attempts["first"].end_ns  # they raced


def test_a_callers_traceparent_is_continued_and_not_sent_to_the_provider(traced, receiver, sim, redis_client):
    trace_id, parent_id = os.urandom(16).hex(), os.urandom(8).hex()
    answer = _ask(traced, make_tenant(redis_client), traceparent=f"00-{trace_id}-{parent_id}-01")
    named = _one_call(receiver, answer, count=6)
    [server] = named["POST /v1/chat/completions"]
    assert server.trace_id == trace_id and server.parent_span_id == parent_id
    [received] = sim_requests(sim, "openai", 1)
    assert "traceparent" not in received["headers"] and "tracestate" not in received["headers"]


def test_an_operator_may_send_the_attempts_traceparent_upstream(receiver, sim, redis_client):
    server = _serve(_traced_app(receiver, trace_upstream=True), sim, redis_client)
    tenant = make_tenant(redis_client)
    try:
        answer = _ask(server, tenant, traceparent=f"00-{'ab' * 16}-{'cd' * 8}-01", tracestate="k=v")
        [attempt] = _one_call(receiver, answer, count=6)["upstream attempt"]
        [received] = sim_requests(sim, "openai", 1)
        assert received["headers"]["traceparent"] == f"00-{attempt.trace_id}-{attempt.span_id}-01"
        assert attempt.trace_id == "ab" * 16 and "tracestate" not in received["headers"]  # the caller's state stays
        # A caller that did not sample: no span is recorded, and the provider is told not to sample either.
        unsampled = "12" * 16
        _ask(server, tenant, traceparent=f"00-{unsampled}-{'34' * 8}-00")
        [received] = sim_requests(sim, "openai", 1)
        assert received["headers"]["traceparent"].startswith(f"00-{unsampled}-")
        assert received["headers"]["traceparent"].endswith("-00")
    finally:
        server.stop()  # its provider's shutdown exports whatever is batched
    assert not [s for s in receiver.received.spans if s.trace_id == unsampled]


def test_no_span_carries_the_api_key_or_the_prompt(traced, receiver, redis_client):
    tenant = make_tenant(redis_client)
    answers = [_ask(traced, tenant, stream=stream) for stream in (False, True)]
    for answer in answers:
        _one_call(receiver, answer, count=6)
    with receiver.received.lock:
        exported = b"".join(receiver.received.raw)
    assert receiver.received.requests > 0
    for secret in (tenant.key, tenant.key[12:], PROMPT, "marker-7f3a91"):
        assert secret.encode() not in exported, secret  # not in any attribute, event, status or name


def test_json_log_lines_of_a_call_carry_its_trace_id(traced, receiver, sim, redis_client):
    tenant = make_tenant(redis_client)
    add_fault(sim, provider="openai", kind="stream_cut", count=1)  # logged by the relay: "stream cut: ..."
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(jsonlog.JsonFormatter())
    relay_log = logging.getLogger("routing.relay.answer")
    level = relay_log.level
    relay_log.addHandler(handler)
    relay_log.setLevel(logging.INFO)
    try:
        answer = _ask(traced, tenant, stream=True)
        named = _one_call(receiver, answer, count=5)
    finally:
        relay_log.removeHandler(handler)
        relay_log.setLevel(level)
    [server] = named["POST /v1/chat/completions"]
    assert server.attributes["tokenway.end_state"] == "upstream_cut"
    lines = [orjson.loads(line) for line in buffer.getvalue().splitlines()]
    mine = [line for line in lines if line.get("request_id") == answer.headers["x-request-id"]]
    assert mine and all(line["trace_id"] == server.trace_id for line in mine), lines


def test_traces_off_no_exporter_and_no_spans(receiver, sim, redis_client, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    app = make_gateway_app(harness.test_config())
    assert app.tracer_provider is None
    server = _serve(app, sim, redis_client)
    try:
        before = receiver.received.requests
        answer = _ask(server, make_tenant(redis_client), stream=True, traceparent=f"00-{'ef' * 16}-{'01' * 8}-01")
        assert answer.headers["x-tokenway-provider"] == "openai"
        time.sleep(0.3)  # six export periods of a traced app: nothing comes
        assert receiver.received.requests == before
    finally:
        server.stop()


def test_without_an_endpoint_the_gateway_loads_no_tracing_sdk():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    code = (
        "import sys; from routing.app import make_gateway_app; app = make_gateway_app(); "
        "print(app.tracer_provider, sorted(m for m in sys.modules if m.startswith(("
        "'opentelemetry.sdk.trace', 'opentelemetry.exporter'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["None", "[]"], out.stdout + out.stderr
