"""The raw relay (routing.relay.raw) against real servers: an HTTP/1.1 upstream on loopback whose every
write the test makes (chunked or content-length framing, plain TCP or TLS), and the relay under uvicorn
(httptools, as the gateway runs) answering a caller that reads the stream over a socket.

What the caller sees: every SSE event the upstream sent, in order, as the upstream's reads come in (a
chunk is written only after the caller saw the one before), in valid chunked framing with its end; the
upstream's connection reused by the next stream (keep-alive after a whole body); a provider that
half-closes its socket mid-frame ends the stream as a cut (only whole events were forwarded); the
caller that stops reading pauses the upstream (backpressure) and gets every byte once it reads again.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import queue
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from routing.http.asgi_io import end_stream, start_stream
from routing.http.raw_out import raw_out
from routing.relay.raw import RawPump
from routing.translate.stream_openai import OpenAIPassthrough
from routing.upstream.attempt import open_attempt
from routing.upstream.raw_reads import hook
from routing.upstream.reads import release_at_end
from routing.usage.answer_facts import AnswerFacts
from routing.usage.tracker import UsageTracker
from tests.routing.harness import ServerThread
from tests.waiting import poll_until

WAIT_S = 10.0
CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def token(i: int) -> bytes:
    return b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"t%d "}}],"usage":null}\n\n' % i


USAGE = b'data: {"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5}}\n\n'
DONE = b"data: [DONE]\n\n"


class Upstream:
    """A scripted HTTP/1.1 server: per request it reads the head and body, then does what the test queues
    (bytes to write, ``"next"`` for the next request on the same connection, ``"half-close"``)."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.actions: queue.Queue[bytes | str] = queue.Queue()
        self.connections = 0
        self.requests = 0
        self.paused_writes = threading.Event()  # a write blocked: the peer stopped reading
        self._tls = tls
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_side=True)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        with contextlib.suppress(OSError), sock:  # the gateway closing a connection at the end of a test
            self._requests(sock)

    def _requests(self, sock: socket.socket) -> None:
        buffered = b""
        while True:
            while b"\r\n\r\n" not in buffered:
                data = sock.recv(65536)
                if not data:
                    return
                buffered += data
            head, buffered = buffered.split(b"\r\n\r\n", 1)
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                ),
                0,
            )
            while len(buffered) < length:
                buffered += sock.recv(65536)
            buffered = buffered[length:]
            self.requests += 1
            while (action := self.actions.get()) != "next":
                if action == "half-close":
                    sock.shutdown(socket.SHUT_WR)
                    sock.recv(1)  # the gateway closes its side
                    return
                assert isinstance(action, bytes)
                self._write(sock, action)

    def _write(self, sock: socket.socket, data: bytes) -> None:
        view = memoryview(data)
        sock.settimeout(0.5)
        while view:
            try:
                sent = sock.send(view)
            except TimeoutError:  # nothing sent for that long: the gateway stopped reading; wait until it reads
                self.paused_writes.set()
                sock.settimeout(None)
                continue
            view = view[sent:]
        sock.settimeout(None)

    def chunk(self, data: bytes) -> None:
        self.actions.put(b"%x\r\n%s\r\n" % (len(data), data))

    def close(self) -> None:
        self._listener.close()


@dataclass
class Delivered:
    delivered: bool = False


@dataclass
class Relay:
    """The gateway's side: an ASGI app that opens the upstream with the gateway's attempt and relays it
    with ``RawPump`` (usage counted by the OpenAI pass-through converter)."""

    upstream_url: str
    ssl_context: ssl.SSLContext | None = None
    idle_s: float = WAIT_S
    outcomes: list[str] = field(default_factory=list)
    trackers: list[UsageTracker] = field(default_factory=list)
    session: aiohttp.ClientSession | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            if self.session is not None:
                await self.session.close()
            await send({"type": "lifespan.shutdown.complete"})
            return
        while (await receive()).get("more_body"):
            pass
        if self.session is None:
            self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=self.ssl_context or True))
        deadline = time.monotonic() + 30
        opened = await open_attempt(
            self.session, self.upstream_url, {}, b"{}", stream=True, first_byte_s=WAIT_S, deadline=deadline
        )
        tracker = UsageTracker(input_estimate=3)
        self.trackers.append(tracker)
        converter = OpenAIPassthrough(tracker, lambda: {}, client_wants_usage=False)
        await start_stream(send, [])
        out = raw_out(send)
        assert out is not None, "uvicorn's httptools cycle: the raw writer applies"
        pump = RawPump(
            Delivered(),
            converter,
            out,
            observe=AnswerFacts().observe,
            counted=tracker.output_estimate,
            cutoff=10**9,
            idle_s=self.idle_s,
            deadline=deadline,
        )
        try:
            assert await pump.run(opened.response.content, opened.first), "a fresh stream is hooked"
            outcome = "done" if converter.done else "eof"
        except (aiohttp.ClientError, TimeoutError) as exc:
            outcome = type(exc).__name__
        self.outcomes.append(outcome)
        if converter.done:
            release_at_end(opened.response)
        else:
            opened.response.close()
        await end_stream(send, b"data: [END]\n\n")


class Caller:
    """Reads the relayed response over a socket, HTTP/1.1 chunked framing decoded by hand."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
        self.sock.sendall(b"POST /stream HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\n\r\n{}")
        self.buffered = b""
        head = self._until(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        assert b"transfer-encoding: chunked" in head.lower()
        self.body = b""
        self.ended = False

    def _until(self, mark: bytes) -> bytes:
        while mark not in self.buffered:
            data = self.sock.recv(65536)
            assert data, f"connection closed before {mark!r}"
            self.buffered += data
        part, self.buffered = self.buffered.split(mark, 1)
        return part

    def _exact(self, size: int) -> bytes:
        while len(self.buffered) < size:
            data = self.sock.recv(65536)
            assert data, "connection closed mid-chunk"
            self.buffered += data
        part, self.buffered = self.buffered[:size], self.buffered[size:]
        return part

    def read_chunk(self) -> bytes:
        size = int(self._until(b"\r\n"), 16)
        data = self._exact(size)
        assert self._exact(2) == b"\r\n", "a chunk ends with CRLF"
        if size == 0:
            self.ended = True
        self.body += data
        return data

    def read_until(self, expected: bytes) -> None:
        while not self.body.endswith(expected):
            assert not self.ended, self.body
            self.read_chunk()

    def read_to_end(self) -> bytes:
        while not self.ended:
            self.read_chunk()
        return self.body

    def close(self) -> None:
        self.sock.close()


def _tls_contexts(tmp: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A self-signed certificate for 127.0.0.1: the server's context and a client's that trusts it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_path, key_path)
    client = ssl.create_default_context(cafile=str(cert_path))
    return server, client


@pytest.fixture(params=["tcp", "tls"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Upstream, Relay, ServerThread]]:
    server_tls, client_tls = _tls_contexts(tmp_path) if request.param == "tls" else (None, None)
    upstream = Upstream(server_tls)
    scheme = "https" if server_tls else "http"
    relay = Relay(f"{scheme}://127.0.0.1:{upstream.port}/v1/chat/completions", client_tls)
    gateway = ServerThread(relay)
    yield upstream, relay, gateway
    gateway.server.should_exit = True
    gateway.thread.join(WAIT_S)
    upstream.close()


def test_chunked_stream_is_forwarded_read_by_read_and_the_connection_reused(
    pair: tuple[Upstream, Relay, ServerThread],
) -> None:
    upstream, relay, gateway = pair
    for stream in range(2):
        upstream.actions.put(CHUNKED)
        upstream.chunk(token(0))
        caller = Caller(gateway.port)
        for i in range(5):  # the next chunk is written only once the caller saw this one: one read each
            caller.read_until(token(i))
            upstream.chunk(token(i + 1))
        caller.read_until(token(5))
        upstream.chunk(USAGE + DONE)  # two events in one read
        upstream.actions.put(b"0\r\n\r\n")
        upstream.actions.put("next")
        body = caller.read_to_end()
        caller.close()
        assert body == b"".join(token(i) for i in range(6)) + DONE + b"data: [END]\n\n"  # usage not asked for
        wanted = stream + 1
        assert poll_until(lambda: len(relay.outcomes) == wanted, timeout=WAIT_S)  # noqa: B023
        assert relay.outcomes[-1] == "done"
        assert relay.trackers[-1].provider_usage["completion_tokens"] == 5  # the provider's usage, taken as it passed
        assert relay.trackers[-1].ascii_chars == 6 * 3  # and the delivered text, counted ("t0 " ... "t5 ")
    assert upstream.requests == 2
    assert upstream.connections == 1, "the second stream reused the first one's upstream connection"


def test_content_length_stream_split_mid_event(pair: tuple[Upstream, Relay, ServerThread]) -> None:
    upstream, relay, gateway = pair
    body = token(0) + token(1) + USAGE + DONE
    upstream.actions.put(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    cut = len(token(0)) + 7  # the second event arrives in two reads
    upstream.actions.put(body[:cut])
    caller = Caller(gateway.port)
    caller.read_until(token(0))
    upstream.actions.put(body[cut:])
    upstream.actions.put("next")
    # the usage-only event is the gateway's to rewrite; this caller did not ask for usage: not forwarded
    assert caller.read_to_end() == token(0) + token(1) + DONE + b"data: [END]\n\n"
    caller.close()
    assert poll_until(lambda: relay.outcomes == ["done"], timeout=WAIT_S)


def test_upstream_half_closed_mid_frame_is_a_cut(pair: tuple[Upstream, Relay, ServerThread]) -> None:
    upstream, relay, gateway = pair
    upstream.actions.put(CHUNKED)
    upstream.chunk(token(0))
    caller = Caller(gateway.port)
    caller.read_until(token(0))
    upstream.actions.put(b"%x\r\n%s" % (len(token(1)), token(1)[:20]))  # half an HTTP chunk, half an event
    upstream.actions.put("half-close")
    assert caller.read_to_end() == token(0) + b"data: [END]\n\n"  # no partial event reached the caller
    caller.close()
    assert poll_until(lambda: relay.outcomes == ["ClientPayloadError"], timeout=WAIT_S)


def test_a_caller_that_stops_reading_pauses_the_upstream(pair: tuple[Upstream, Relay, ServerThread]) -> None:
    upstream, relay, gateway = pair
    upstream.actions.put(CHUNKED)
    upstream.chunk(token(0))
    caller = Caller(gateway.port)
    caller.read_until(token(0))
    big = b"data: " + b"x" * 60_000 + b"\n\n"
    sent = 0
    while not upstream.paused_writes.is_set():  # until both socket buffers are full and our reading is paused
        upstream.chunk(big)
        sent += 1
        assert poll_until(lambda: upstream.actions.empty() or upstream.paused_writes.is_set(), timeout=WAIT_S)
        assert sent < 2000, "the upstream was never held back"
    upstream.chunk(DONE)
    upstream.actions.put(b"0\r\n\r\n")
    upstream.actions.put("next")
    body = caller.read_to_end()
    caller.close()
    assert body == token(0) + big * sent + DONE + b"data: [END]\n\n"
    assert poll_until(lambda: relay.outcomes == ["done"], timeout=WAIT_S)


def test_idle_upstream_times_out(pair: tuple[Upstream, Relay, ServerThread]) -> None:
    upstream, relay, gateway = pair
    relay.idle_s = 0.3
    upstream.actions.put(CHUNKED)
    upstream.chunk(token(0))
    caller = Caller(gateway.port)
    assert caller.read_to_end() == token(0) + b"data: [END]\n\n"
    caller.close()
    assert poll_until(lambda: relay.outcomes == ["TimeoutError"], timeout=WAIT_S)
    upstream.actions.put("half-close")


class RawPumpless:
    def data(self, chunk: bytes) -> None:
        raise AssertionError("not hooked")

    def eof(self) -> None:
        raise AssertionError("not hooked")

    def error(self, exc: BaseException) -> None:
        raise AssertionError("not hooked")


def test_no_hook_for_a_reader_with_buffered_bytes() -> None:
    async def check() -> None:
        loop = asyncio.get_running_loop()
        protocol = aiohttp.client_proto.ResponseHandler(loop)
        content = aiohttp.StreamReader(protocol, 2**16, loop=loop)
        content.feed_data(b"data: x\n\n")  # bytes a reader buffered are read the usual way
        assert hook(content, RawPumpless()) is None

    asyncio.run(check())
