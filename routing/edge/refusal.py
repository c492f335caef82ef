"""What the server answers by itself (no application involved): a status line, a few headers and a
JSON error body in the shape of the API the path belongs to.

``/v1/messages*`` gets Anthropic's shape, the rest of ``/v1`` OpenAI's (both as routing.wire renders
them); every other path the management API's ``{"error": {"code", "message", "param"}}``. A request
whose path could not be read gets OpenAI's shape, which carries the management API's three fields too.
"""

from __future__ import annotations

import http
import os
from dataclasses import dataclass

import orjson

from routing.http import asgi_io
from routing.http.errors import GatewayError
from routing.wire import anthropic, openai


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    code: str
    message: str
    retry_after: int | None = None


def body_for(path: bytes, refusal: Refusal) -> bytes:
    err = GatewayError(refusal.status, refusal.code, refusal.message)
    if path.startswith(b"/v1/messages"):
        return anthropic.error_body(err)
    if path.startswith(b"/v1/") or not path.startswith(b"/"):
        return openai.error_body(err)
    return orjson.dumps({"error": {"code": refusal.code, "message": refusal.message, "param": None}})


def response_bytes(path: bytes, refusal: Refusal, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole response, ``connection: close`` included: the server closes after writing it."""
    body = body_for(path, refusal)
    lines = [b"HTTP/1.1 %d %s" % (refusal.status, http.HTTPStatus(refusal.status).phrase.encode())]
    lines += [name + b": " + value for name, value in [*default_headers, *request_id_headers()]]
    lines += [b"content-type: application/json", b"content-length: %d" % len(body), b"connection: close"]
    if refusal.retry_after is not None:
        lines.append(b"retry-after: %d" % refusal.retry_after)
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def request_id_headers() -> list[tuple[bytes, bytes]]:
    """A fresh id in the gateway's format (``gen-`` + 24 hex digits) under both SDKs' header names."""
    return asgi_io.request_id_headers("gen-" + os.urandom(12).hex())


def header_timeout(limit_s: float) -> Refusal:
    return Refusal(408, "request_timeout", f"Request headers were not complete within {limit_s:g} s.")


def body_timeout(limit_s: float, min_rate: int) -> Refusal:
    message = f"Request body arrived slower than {min_rate} bytes/s (after the first {limit_s:g} s)."
    return Refusal(408, "request_timeout", message)


def url_too_long(limit: int) -> Refusal:
    return Refusal(414, "url_too_long", f"Request URL exceeds {limit} bytes.")


def headers_too_large(limit: int) -> Refusal:
    return Refusal(431, "headers_too_large", f"Request headers exceed {limit} bytes.")


def too_many_headers(limit: int) -> Refusal:
    return Refusal(431, "too_many_headers", f"Request has more than {limit} headers.")


def header_not_ascii(name: bytes) -> Refusal:
    shown = name.decode("latin-1")
    return Refusal(400, "invalid_header", f"Header {shown!r} holds bytes outside ASCII; encode its value.")


def server_busy(cap: int) -> Refusal:
    return Refusal(503, "server_busy", f"This server holds its maximum of {cap} connections; retry shortly.", 1)


# llhttp's reasons that are about where a request ends (request smuggling territory, RFC 9112 §6.3).
_FRAMING_WORDS = ("content-length", "transfer-encoding", "chunk")


def malformed(reason: str, *, url: bool = False) -> Refusal:
    """A request the HTTP parser refused; ``reason`` is its own words (llhttp's)."""
    if url:
        return Refusal(400, "invalid_url", f"Malformed request URL: {reason}.")
    if any(word in reason.lower() for word in _FRAMING_WORDS):
        return Refusal(400, "invalid_framing", f"Ambiguous or malformed message framing: {reason}.")
    return Refusal(400, "malformed_request", f"Malformed HTTP request: {reason}.")
