"""Hostile clients against the real gateway server (``python -m routing``: uvicorn with the edge
protocol, routing/edge), over real sockets, with short limits so each case takes about a second:
idle connections, slow headers (slowloris), slow bodies, header floods, over-long URLs, bad framing
and a connection flood are each closed or refused within the configured time, in JSON."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests

from devtools.ports import free_port, wait_for_port
from devtools.processes import spawn, stop
from routing.edge import PROTOCOL
from tests.routing.harness import make_tenant
from tests.routing.raw_http import Answer, connect, exchange, read_response, read_until_closed, send_slowly
from tests.waiting import wait_until

pytestmark = pytest.mark.adversarial

ROOT = Path(__file__).resolve().parents[2]
HEADER_TIMEOUT_S = 1.0
BODY_TIMEOUT_S = 1.0
BODY_MIN_RATE = 1_000
KEEPALIVE_S = 1.0
MAX_HEADERS = 50
MAX_HEADER_BYTES = 16 * 1024
MAX_URL_BYTES = 4 * 1024
MAX_CONNECTIONS = 30
SLACK_S = 1.5  # a loaded 2-core machine: the event loop may run the timer late
LIMITS_ENV = {
    "TOKENWAY_HTTP_HEADER_TIMEOUT": str(HEADER_TIMEOUT_S),
    "TOKENWAY_HTTP_BODY_TIMEOUT": str(BODY_TIMEOUT_S),
    "TOKENWAY_HTTP_BODY_MIN_RATE": str(BODY_MIN_RATE),
    "TOKENWAY_HTTP_KEEPALIVE_TIMEOUT": str(KEEPALIVE_S),
    "TOKENWAY_HTTP_MAX_HEADERS": str(MAX_HEADERS),
    "TOKENWAY_HTTP_MAX_HEADER_BYTES": str(MAX_HEADER_BYTES),
    "TOKENWAY_HTTP_MAX_URL_BYTES": str(MAX_URL_BYTES),
    "TOKENWAY_HTTP_MAX_CONNECTIONS": str(MAX_CONNECTIONS),
}
CHAT = b"POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n"


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    port = free_port()
    spool = tmp_path_factory.mktemp("spool")
    env = {**os.environ, **LIMITS_ENV, "TOKENWAY_SPOOL_DIR": str(spool), "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}"}
    server = spawn([sys.executable, "-m", "routing", "--port", str(port)], env=env, cwd=ROOT)
    try:
        wait_for_port(port, timeout=60)
        yield port
    finally:
        stop(server, timeout=20)


def refused(answer: Answer, status: int, code: str) -> dict:
    """The server's own refusal: the status, JSON in the caller's shape with the code, and then closed."""
    assert answer.status == status, answer.raw[:300]
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["connection"] == "close"
    body = answer.json()
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return body


def test_idle_connections_are_closed_after_the_header_timeout(port: int) -> None:
    sockets = [connect(port) for _ in range(20)]
    started = time.monotonic()
    try:
        answers = [read_until_closed(s, started=started, timeout=HEADER_TIMEOUT_S + SLACK_S) for s in sockets]
    finally:
        for s in sockets:
            s.close()
    assert all(a.raw == b"" for a in answers)  # nothing was asked: closed without an answer
    assert min(a.elapsed for a in answers) >= HEADER_TIMEOUT_S * 0.5  # not at once: the deadline, from each accept


def test_slowloris_headers_get_408_within_the_header_timeout(port: int) -> None:
    results: list[Answer] = []

    def one() -> None:  # a header line every 0.3 s, never the blank line that ends them
        lines = (b"X-Drip-%d: x\r\n" % i for i in range(100))
        with connect(port) as sock:
            sock.sendall(CHAT)
            results.append(send_slowly(sock, lines, every=0.3, timeout=HEADER_TIMEOUT_S + SLACK_S))

    threads = [threading.Thread(target=one) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 10
    for answer in results:
        body = refused(answer, 408, "request_timeout")
        assert body["error"]["type"] == "invalid_request_error"  # OpenAI's shape on /v1/chat/completions
        assert answer.elapsed <= HEADER_TIMEOUT_S + SLACK_S


def test_slow_body_gets_408_in_the_anthropic_shape_on_messages(port: int, redis_client: redis.Redis) -> None:
    key = make_tenant(redis_client).key.encode()  # a valid key: the gateway reads the body only then
    head = b"POST /v1/messages HTTP/1.1\r\nHost: gw\r\nx-api-key: %s\r\nContent-Length: 1000\r\n\r\n" % key
    with connect(port) as sock:
        sock.sendall(head)
        answer = send_slowly(sock, (b"{" for _ in range(1000)), every=0.3, timeout=BODY_TIMEOUT_S + SLACK_S)
    body = refused(answer, 408, "request_timeout")
    assert body["type"] == "error" and body["error"]["type"]  # Anthropic's {"type": "error", "error": {...}}
    assert answer.elapsed <= BODY_TIMEOUT_S + SLACK_S + 0.3


def test_a_body_at_the_minimum_rate_is_read_past_the_body_timeout(port: int, redis_client: redis.Redis) -> None:
    tenant = make_tenant(redis_client)
    payload = b'{"model":"no-such-model","messages":[{"role":"user","content":"' + b"x" * 2_900 + b'"}]}'
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\n"
        b"Content-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n"
        % (tenant.key.encode(), len(payload))
    )
    pieces = [payload[i : i + 200] for i in range(0, len(payload), 200)]  # 2,000 bytes/s: 1.5 s in all
    with connect(port) as sock:
        sock.sendall(head)
        answer = send_slowly(sock, pieces, every=0.1, timeout=10)
    assert answer.elapsed > BODY_TIMEOUT_S  # slower than the initial allowance, faster than the rate
    assert answer.status == 404  # the gateway read the whole body and answered for the unknown model
    assert answer.json()["error"]["code"] == "model_not_found"


def test_keep_alive_connection_is_closed_after_its_idle_timeout(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: gw\r\n\r\n")
        started = time.monotonic()
        answer = read_until_closed(sock, started=started, timeout=KEEPALIVE_S + SLACK_S + 1)
    assert answer.raw.startswith(b"HTTP/1.1 401")  # answered, then kept open only while idle
    assert KEEPALIVE_S * 0.9 <= answer.elapsed <= KEEPALIVE_S + SLACK_S


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        (b"".join(b"X-Flood-%d: 1\r\n" % i for i in range(MAX_HEADERS + 1)), "too_many_headers"),
        (b"".join(b"X-Flood-%d: 1\r\n" % i for i in range(5_000)), "too_many_headers|headers_too_large"),
        (b"X-Big: " + b"a" * (MAX_HEADER_BYTES + 1) + b"\r\n", "headers_too_large"),
    ],
    ids=["over-the-count", "5000-headers", "one-huge-header"],
)
def test_header_floods_get_431(port: int, headers: bytes, code: str) -> None:
    answer = exchange(port, CHAT + headers + b"Content-Length: 2\r\n\r\n{}")
    assert answer.json()["error"]["code"] in code.split("|")  # 5,000: whichever limit the server meets first
    refused(answer, 431, answer.json()["error"]["code"])


def test_a_100kb_query_string_gets_414(port: int) -> None:
    answer = exchange(port, b"GET /v1/models?q=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: gw\r\n\r\n")
    refused(answer, 414, "url_too_long")


def test_refusals_are_counted_in_metrics(port: int) -> None:
    exchange(port, b"GET /v1/models?q=" + b"a" * (MAX_URL_BYTES + 1) + b" HTTP/1.1\r\nHost: gw\r\n\r\n")
    metrics = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    assert 'tokenway_edge_refusals_total{code="url_too_long",status="414"}' in metrics


def test_outside_v1_the_refusal_has_the_management_api_shape(port: int) -> None:
    answer = exchange(port, b"GET /api/v1/key?q=" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: gw\r\n\r\n")
    body = refused(answer, 414, "url_too_long")
    assert set(body["error"]) == {"code", "message", "param"}


@pytest.mark.parametrize(
    ("request_bytes", "code"),
    [
        (b"GET /v1/mo\x00dels HTTP/1.1\r\nHost: gw\r\n\r\n", "invalid_url"),
        (b"GET /v1/models HTTP/1.1\nHost: gw\n\n", "malformed_request"),
        (CHAT + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "invalid_framing"),
        (CHAT + b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n{}", "invalid_framing"),
        (CHAT + b"X-Bytes: \xff\xfe\r\nContent-Length: 2\r\n\r\n{}", "invalid_header"),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", "malformed_request"),  # TLS to the plain port
    ],
    ids=["nul-in-request-line", "lf-only", "cl-and-te", "two-content-lengths", "0xff-in-header", "tls-hello"],
)
def test_bad_framing_gets_400_in_json(port: int, request_bytes: bytes, code: str) -> None:
    refused(exchange(port, request_bytes), 400, code)


def test_connections_beyond_the_cap_get_503_and_are_closed(port: int) -> None:
    held = [connect(port) for _ in range(MAX_CONNECTIONS)]
    try:
        with connect(port) as extra:
            started = time.monotonic()
            extra.sendall(b"GET /v1/models HTTP/1.1\r\nHost: gw\r\n\r\n")
            answer = read_until_closed(extra, started=started, timeout=SLACK_S + 2)
        refused(answer, 503, "server_busy")
        assert answer.headers["retry-after"] == "1"
    finally:
        for s in held:
            s.close()
    # once they are gone, a new connection is served again (the server may need a moment to see the FINs)
    request = b"GET /v1/models HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n"
    wait_until(lambda: exchange(port, request).status == 401, timeout=5, message="served again below the cap")


def test_a_non_ascii_header_in_a_later_read_is_refused(port: int) -> None:
    pieces = [CHAT + b"X-Plain: 1\r\n", b"X-Bytes: caf\xc3\xa9\r\nContent-Length: 2\r\n\r\n{}"]
    with connect(port) as sock:
        answer = send_slowly(sock, pieces, every=0.2, timeout=5)
    refused(answer, 400, "invalid_header")


def test_a_utf8_body_is_not_a_header_problem(port: int, redis_client: redis.Redis) -> None:
    key = make_tenant(redis_client).key.encode()
    payload = '{"model":"no-such-model","messages":[{"role":"user","content":"你好, café"}]}'.encode()
    request = (
        CHAT + b"Authorization: Bearer %s\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (key, len(payload), payload)
    )
    answer = exchange(port, request)
    assert answer.status == 404 and answer.json()["error"]["code"] == "model_not_found"


def test_make_runs_web_process_serves_with_the_edge_protocol(tmp_path: Path) -> None:
    from devtools.runall import _children

    web = next(c for c in _children(port=8000, sim_port=8100, beat_schedule=tmp_path / "beat") if c.name == "web")
    assert web.command[web.command.index("--http") + 1] == PROTOCOL


def test_limits_come_from_the_environment_with_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    from contracts.env import EnvError
    from routing.edge.limits import SocketLimits

    for name in LIMITS_ENV:
        monkeypatch.delenv(name, raising=False)
    assert SocketLimits.from_env() == SocketLimits()
    assert SocketLimits().header_timeout_s == 10 and SocketLimits().max_header_bytes == 65_536
    monkeypatch.setenv("TOKENWAY_HTTP_MAX_HEADERS", "40")
    monkeypatch.setenv("TOKENWAY_HTTP_BODY_TIMEOUT", "2.5")
    assert (SocketLimits.from_env().max_headers, SocketLimits.from_env().body_timeout_s) == (40, 2.5)
    monkeypatch.setenv("TOKENWAY_HTTP_MAX_URL_BYTES", "8k")
    with pytest.raises(EnvError, match="TOKENWAY_HTTP_MAX_URL_BYTES"):
        SocketLimits.from_env()


@pytest.fixture(scope="module")
def raising_port() -> Iterator[int]:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "tests.routing.raising_app:app", "--port", str(port), "--http", PROTOCOL,
               "--log-level", "critical"]  # fmt: skip
    server = spawn(command, env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}"}, cwd=ROOT)
    try:
        wait_for_port(port, timeout=60)
        yield port
    finally:
        stop(server, timeout=20)


@pytest.mark.parametrize(
    ("path", "shape"),
    [(b"/v1/chat/completions", "openai"), (b"/v1/messages", "anthropic"), (b"/api/v1/key/silent", "management")],
)
def test_an_application_failure_is_a_json_500_in_the_callers_shape(raising_port: int, path: bytes, shape: str) -> None:
    answer = exchange(raising_port, b"POST %s HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\n\r\n{}" % path)
    body = refused(answer, 500, "internal_error")
    assert answer.headers["x-request-id"].startswith("gen-")
    kinds = {
        "openai": body["error"].get("type") == "server_error",
        "anthropic": body.get("type") == "error",
        "management": set(body["error"]) == {"code", "message", "param"},
    }
    assert kinds[shape]


def test_slow_headers_of_a_second_request_on_a_kept_alive_connection_get_408(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: gw\r\n\r\n")
        assert read_response(sock).status == 401  # answered; the connection stays open
        lines = [CHAT, *(b"X-Drip-%d: x\r\n" % i for i in range(100))]
        answer = send_slowly(sock, lines, every=0.3, timeout=HEADER_TIMEOUT_S + SLACK_S)
    refused(answer, 408, "request_timeout")
    assert answer.elapsed <= HEADER_TIMEOUT_S + SLACK_S


def test_a_non_ascii_header_read_with_a_large_body_is_refused(port: int) -> None:
    # One read of head and a 32 KB body: the read is too long to scan whole, the head's values are checked.
    body = b'{"messages":[{"role":"user","content":"' + b"x" * 32_000 + b'"}]}'
    request = CHAT + b"X-Bytes: caf\xc3\xa9\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    refused(exchange(port, request), 400, "invalid_header")
