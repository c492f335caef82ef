"""Small ASGI helpers: types, request body with a size limit, headers, plain responses."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from itertools import chain
from typing import Any

from routing.http.errors import body_too_large

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

JSON = b"application/json"
SSE = b"text/event-stream"


class ClientGone(Exception):
    """The client disconnected before its request body was read."""


# The request headers the gateway reads (keys, route mode, the Anthropic version and betas passed on).
# Only these are decoded and kept with a call: SDKs send 10-20 others (x-stainless-*, user-agent, ...)
# that would be held as strings for as long as a stream stays open. Reading a new header: add it here.
READ_HEADERS = frozenset({b"authorization", b"x-api-key", b"x-tokenway-route", b"anthropic-version", b"anthropic-beta"})


def header_map(scope: Scope) -> dict[str, str]:
    """The request headers the gateway reads (``READ_HEADERS``), by lower-case name."""
    return {
        name.decode("latin-1"): value.decode("latin-1")
        for name, value in scope.get("headers", ())
        if name in READ_HEADERS
    }


async def read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise body_too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


MAX_HEADER_BYTES = 64 * 1024  # all request headers together; Claude Code's largest are a few KB


def headers_too_large(scope: Scope, limit: int = MAX_HEADER_BYTES) -> bool:
    """The server read the headers already; refusing here keeps them out of parsing, logs and forwarding."""
    return sum(map(len, chain.from_iterable(scope.get("headers", ())))) > limit  # in C: no frame per header


def request_id_headers(request_id: str) -> Headers:
    """The call's id under each SDK's name: OpenAI's reads ``x-request-id``, Anthropic's ``request-id``."""
    rid = request_id.encode()
    return [(b"x-request-id", rid), (b"request-id", rid)]


async def respond(send: Send, status: int, body: bytes, headers: Headers, content_type: bytes = JSON) -> None:
    all_headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body})


async def start_stream(send: Send, headers: Headers) -> None:
    all_headers = [(b"content-type", SSE), (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no"), *headers]
    await send({"type": "http.response.start", "status": 200, "headers": all_headers})


class StatusSeen:
    """The server's send, noting the response status on the way. Not a coroutine: it hands back the
    server's awaitable; a slotted object, not a closure and its cell, for every open stream. Once the
    response has started its status cannot change, so a stream's body goes to ``body_send(send)``."""

    __slots__ = ("send", "status")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.status = 0

    def __call__(self, message: Message) -> Awaitable[None]:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        return self.send(message)


def body_send(send: Send) -> Send:
    """The send for body messages of a response whose start was sent: a ``StatusSeen`` has noted its
    status already, so the send under it is used (one Python call less per relayed chunk)."""
    while isinstance(send, StatusSeen):
        send = send.send
    return send


def send_chunk(send: Send, data: bytes) -> Awaitable[None]:
    """Not a coroutine of its own: the server's awaitable is handed back, one frame less per chunk."""
    return send({"type": "http.response.body", "body": data, "more_body": True})


async def end_stream(send: Send, data: bytes = b"") -> None:
    await send({"type": "http.response.body", "body": data, "more_body": False})
