"""Anthropic Messages wire format: request view, errors, usage as the caller sees it."""

from __future__ import annotations

from typing import Any

import orjson

from contracts.usage import Tokens
from routing.http.errors import GatewayError
from routing.http.sse import frame
from routing.wire import checks, schemas
from routing.wire.request import Body, RequestView, has_image, message_overhead, positive_int

NAME = "anthropic"
ESTIMATED = ("messages", "system", "tools")  # the fields whose strings the input estimate counts

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "invalid_request_error",  # the server's own refusals (routing/edge): too slow, URL too long
    413: "request_too_large",
    414: "invalid_request_error",
    429: "rate_limit_error",
    431: "invalid_request_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def view(body: Body, *, count_only: bool = False) -> RequestView:
    messages = body.get("messages")
    # One walk: nesting of every field and the estimate's tokens; before the schema, which recurses.
    input_estimate = checks.measure(body, ESTIMATED) + message_overhead(messages)
    (schemas.COUNT_TOKENS if count_only else schemas.MESSAGES).check(body)
    return RequestView(
        dialect=NAME,
        model=body["model"],
        stream=body.get("stream") is True,
        max_tokens=positive_int(body.get("max_tokens")),
        input_estimate=input_estimate,
        needs=_needs(body, messages),
        provider_prefs=body["provider"] if isinstance(body.get("provider"), dict) else {},
        wants_stream_usage=True,
    )


def _needs(body: Body, messages: Any) -> frozenset[str]:
    needs = set()
    if body.get("tools"):
        needs.add("tools")
    if has_image(messages):
        needs.add("vision")
    return frozenset(needs)


def error_payload(err: GatewayError) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(err.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": err.message, "code": err.code}}


def error_body(err: GatewayError) -> bytes:
    return orjson.dumps(error_payload(err))


def stream_error(err: GatewayError) -> bytes:
    return frame(orjson.dumps(error_payload(err)), b"error")


def usage_payload(tokens: Tokens, cost_usd: float, *, estimated: bool = False) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": tokens.input_uncached,
        "cache_read_input_tokens": tokens.cache_read,
        "cache_creation_input_tokens": tokens.cache_write_5m + tokens.cache_write_1h,
        "cache_creation": {
            "ephemeral_5m_input_tokens": tokens.cache_write_5m,
            "ephemeral_1h_input_tokens": tokens.cache_write_1h,
        },
        "output_tokens": tokens.output,
        "cost": cost_usd,
    }
    if estimated:
        usage["estimated"] = True
    return usage
