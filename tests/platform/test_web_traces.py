"""Web traces as an operator's collector sees them: requests through Django's real handlers (the sync
test client and the ASGI handler the web process runs) export over OTLP/HTTP to a real receiver on
loopback, one server span per request named after its URL route, continuing the caller's trace; with
traces off the middleware is not even in the chain and no tracing SDK is loaded."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.asgi import get_asgi_application
from django.core.exceptions import MiddlewareNotUsed
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path

from foundation import web_traces
from tests.factories import issue_key
from tests.routing.otlp_receiver import OtlpReceiver, ReceivedSpan, exporting_to_receiver
from tests.waiting import poll_until

pytestmark = pytest.mark.django_db(transaction=True)


def _broken(request: HttpRequest, order_id: int) -> HttpResponse:
    return HttpResponse(status=502)


urlpatterns = [path("orders/<int:order_id>/broken/", _broken)]  # for the test marked urls(__name__)


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpReceiver]:
    with exporting_to_receiver(monkeypatch, web_traces.TRACES, "tokenway-web-test") as server:
        yield server


def _server_span(receiver: OtlpReceiver, trace_id: str) -> ReceivedSpan:
    def found() -> list[ReceivedSpan]:
        with receiver.received.lock:
            return [s for s in receiver.received.spans if s.trace_id == trace_id]

    spans = poll_until(found, timeout=10)
    assert spans, [s.name for s in receiver.received.spans]
    [span] = spans
    assert span.kind == "server" and span.service == "tokenway-web-test"
    return span


def _traceparent() -> tuple[str, str, str]:
    trace_id, parent_id = os.urandom(16).hex(), os.urandom(8).hex()
    return trace_id, parent_id, f"00-{trace_id}-{parent_id}-01"


def test_a_console_api_request_is_one_server_span_named_after_its_route(receiver, owner, api_client_for):
    trace_id, parent_id, header = _traceparent()
    client = api_client_for(owner)
    answer = client.get("/api/v1/tenants/acme/members/?secret-marker=1", HTTP_TRACEPARENT=header)
    assert answer.status_code == 200
    span = _server_span(receiver, trace_id)
    assert span.name == "GET /api/v1/tenants/<slug:tenant_slug>/members/"
    assert span.parent_span_id == parent_id
    assert span.attributes["http.route"] == "/api/v1/tenants/<slug:tenant_slug>/members/"
    assert span.attributes["http.request.method"] == "GET"
    assert span.attributes["http.response.status_code"] == 200
    assert span.attributes["tokenway.tenant_slug"] == "acme" and span.status_code == 0
    with receiver.received.lock:
        exported = b"".join(receiver.received.raw)
    for secret in (
        b"secret-marker",
        b"/api/v1/tenants/acme/",
        b"sessionid",
        client.cookies["sessionid"].value.encode(),
    ):
        assert secret not in exported, secret  # no query string, raw path or cookie in any attribute


def test_an_api_key_request_carries_its_tenant_id_and_never_the_key(receiver, tenant):
    _, plaintext = issue_key(tenant, name="ci")
    trace_id, _, header = _traceparent()
    answer = Client().get("/api/v1/key", HTTP_AUTHORIZATION=f"Bearer {plaintext}", HTTP_TRACEPARENT=header)
    assert answer.status_code == 200, answer.content
    span = _server_span(receiver, trace_id)
    assert span.name == "GET /api/v1/key" and span.attributes["tokenway.tenant_id"] == tenant.pk
    with receiver.received.lock:
        exported = b"".join(receiver.received.raw)
    assert plaintext.encode() not in exported and plaintext[12:].encode() not in exported


def _asgi_get(app: Any, path: str, traceparent: str) -> int:
    """One GET through an ASGI application as uvicorn drives it; the response status."""
    sent: list[dict[str, Any]] = []

    incoming = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await asyncio.Event().wait()  # the client stays connected: Django's disconnect watch waits here
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"testserver"), (b"traceparent", traceparent.encode())],
             "client": ("127.0.0.1", 50000), "server": ("testserver", 80)}  # fmt: skip
    asyncio.run(app(scope, receive, send))
    return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))


def test_the_asgi_handler_traces_too_and_an_unknown_path_keeps_its_ids_out(receiver):
    app = get_asgi_application()  # what tokenway.asgi serves Django with, built once the web process starts
    trace_id, parent_id, header = _traceparent()
    assert _asgi_get(app, "/leaderboard/definitions/", header) == 200
    assert _asgi_get(app, "/no-such-page/4711/", f"00-{'ab' * 16}-{'cd' * 8}-01") == 404
    span = _server_span(receiver, trace_id)
    assert span.name == "GET /leaderboard/definitions/" and span.parent_span_id == parent_id
    missing = _server_span(receiver, "ab" * 16)
    assert missing.name == "GET" and "http.route" not in missing.attributes  # no route: the bare method
    assert missing.attributes["http.response.status_code"] == 404
    assert all("4711" not in s.name for s in receiver.received.spans)


@pytest.mark.urls(__name__)
def test_a_5xx_answer_marks_the_span_as_an_error(receiver):
    trace_id, _, header = _traceparent()
    assert Client().post("/orders/31/broken/", HTTP_TRACEPARENT=header).status_code == 502
    span = _server_span(receiver, trace_id)
    assert span.name == "POST /orders/<int:order_id>/broken/" and span.status_code == 2
    assert span.attributes["http.response.status_code"] == 502


def test_without_a_traceparent_each_request_starts_its_own_trace(receiver):
    assert Client().get("/leaderboard/definitions/").status_code == 200
    spans = poll_until(
        lambda: [s for s in receiver.received.spans if s.name == "GET /leaderboard/definitions/"], timeout=10
    )
    [span] = spans
    assert span.parent_span_id == "" and len(span.trace_id) == 32


def test_traces_disabled_leave_the_middleware_out_and_send_nothing(receiver, monkeypatch):
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    client = Client()
    assert client.get("/leaderboard/definitions/", HTTP_TRACEPARENT=_traceparent()[2]).status_code == 200
    with pytest.raises(MiddlewareNotUsed):  # what makes Django leave it out of every handler's chain
        web_traces.WebTraceMiddleware(lambda request: HttpResponse())
    time.sleep(0.3)  # six export periods of a traced process: nothing comes
    assert receiver.received.requests == 0 and web_traces.TRACES.provider is None


def test_without_an_endpoint_a_request_loads_no_tracing_sdk():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    code = (
        "import sys, django; django.setup(); from django.test import Client; "
        "status = Client().get('/favicon.ico').status_code; "
        "print(status, sorted(m for m in sys.modules if m.startswith(("
        "'opentelemetry.sdk.trace', 'opentelemetry.exporter', 'opentelemetry.trace.propagation.tracecontext'))))"
    )
    env["DJANGO_SETTINGS_MODULE"] = "tokenway.settings"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["204", "[]"], out.stdout + out.stderr
