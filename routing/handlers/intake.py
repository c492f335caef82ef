"""What every authenticated endpoint does first: request id, API key, JSON body."""

from __future__ import annotations

import os
from typing import Any

import orjson

from contracts.jsonlog import REQUEST_ID
from contracts.keyrecord import KeyRecord
from routing.gateway import Gateway
from routing.http.asgi_io import Send, request_id_headers, respond
from routing.http.errors import GatewayError, invalid_key, invalid_request, store_unavailable
from routing.redis.pipe import RedisUnavailable
from routing.telemetry.tracing import note_request_id
from routing.wire.dialects import Dialect


def new_request_id() -> str:
    """A fresh id, also set for this call's log lines (contracts.jsonlog: one task per request) and,
    when traces are on, on its span (the same value as ``x-request-id``)."""
    request_id = "gen-" + os.urandom(12).hex()
    REQUEST_ID.set(request_id)
    note_request_id(request_id)
    return request_id


def api_key_from(headers: dict[str, str]) -> str:
    """``Authorization: Bearer`` or ``x-api-key``: identical decisions either way."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    key = headers.get("x-api-key", "").strip()
    if not key:
        raise invalid_key()
    return key


async def authenticate(gateway: Gateway, headers: dict[str, str]) -> KeyRecord:
    try:
        return await gateway.keys.resolve(api_key_from(headers))
    except RedisUnavailable as exc:
        raise store_unavailable() from exc


def parse_json(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise invalid_request(f"Request body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise invalid_request("Request body must be a JSON object.")
    return body  # nesting and the token estimate: one walk, in the dialect's view (routing.wire.checks)


async def send_error(send: Send, dialect: Dialect, err: GatewayError, request_id: str) -> None:
    headers = request_id_headers(request_id)
    if err.retry_after is not None:
        headers.append((b"retry-after", str(max(1, round(err.retry_after))).encode()))
    await respond(send, err.status, dialect.error_body(err), headers)
