"""OpenAI Chat Completions wire format: request view, errors, usage as the caller sees it."""

from __future__ import annotations

from typing import Any

import orjson

from contracts.usage import Tokens
from routing.http.errors import GatewayError
from routing.http.sse import frame
from routing.wire import checks, schemas
from routing.wire.request import Body, RequestView, has_image, message_overhead, positive_int

NAME = "openai"
ESTIMATED = ("messages", "tools")  # the fields whose strings the input estimate counts

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "insufficient_quota",
    403: "permission_error",
    404: "invalid_request_error",
    408: "invalid_request_error",  # the server's own refusals (routing/edge): too slow, URL too long
    413: "invalid_request_error",
    414: "invalid_request_error",
    429: "rate_limit_error",
    431: "invalid_request_error",
}


def view(body: Body) -> RequestView:
    messages = body.get("messages")
    # One walk: nesting of every field and the estimate's tokens; before the schema, which recurses.
    input_estimate = checks.measure(body, ESTIMATED) + message_overhead(messages)
    schemas.CHAT.check(body)
    options = body.get("stream_options")
    return RequestView(
        dialect=NAME,
        model=body["model"],
        stream=body.get("stream") is True,
        max_tokens=positive_int(body.get("max_completion_tokens")) or positive_int(body.get("max_tokens")),
        input_estimate=input_estimate,
        needs=needs_of(body, messages),
        provider_prefs=_prefs(body),
        wants_stream_usage=isinstance(options, dict) and options.get("include_usage") is True,
    )


def needs_of(body: Body, messages: Any) -> frozenset[str]:
    needs = set()
    if body.get("tools"):
        needs.add("tools")
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") in ("json_object", "json_schema"):
        needs.add("json_mode")
    if has_image(messages):
        needs.add("vision")
    return frozenset(needs)


def _prefs(body: Body) -> dict[str, Any]:
    prefs = body.get("provider")
    return prefs if isinstance(prefs, dict) else {}


def error_payload(err: GatewayError) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(err.status, "server_error" if err.status < 600 else "api_error")
    return {"error": {"message": err.message, "type": kind, "param": err.param, "code": err.code}}


def error_body(err: GatewayError) -> bytes:
    return orjson.dumps(error_payload(err))


def stream_error(err: GatewayError) -> bytes:
    return frame(orjson.dumps(error_payload(err)))


def usage_payload(tokens: Tokens, cost_usd: float, *, estimated: bool = False) -> dict[str, Any]:
    cache_write = tokens.cache_write_5m + tokens.cache_write_1h
    usage: dict[str, Any] = {
        "prompt_tokens": tokens.input_total,
        "completion_tokens": tokens.output,
        "total_tokens": tokens.input_total + tokens.output,
        "prompt_tokens_details": {"cached_tokens": tokens.cache_read, "cache_write_tokens": cache_write},
        "completion_tokens_details": {"reasoning_tokens": tokens.reasoning},
        "cost": cost_usd,
        "cache_write_tokens": cache_write,  # before the official type had it in prompt_tokens_details; kept
    }
    if estimated:
        usage["estimated"] = True
    return usage
