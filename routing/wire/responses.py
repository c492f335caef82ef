"""OpenAI Responses wire format: request view (translated up front to chat-completions), errors,
usage as the caller sees it. Errors have the chat-completions shape, as OpenAI's own API does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contracts.usage import Tokens
from routing.http.errors import GatewayError, invalid_request
from routing.translate.responses_events import error_event
from routing.translate.responses_request import ResponsesShape, to_chat
from routing.wire import checks, openai, schemas
from routing.wire.request import Body, RequestView, estimate_input_tokens, positive_int

NAME = "responses"

error_body = openai.error_body
error_payload = openai.error_payload


@dataclass(slots=True)
class ResponsesView(RequestView):
    shape: ResponsesShape = field(default_factory=ResponsesShape)


def no_state() -> GatewayError:
    return GatewayError(
        400,
        "previous_response_not_found",
        "Tokenway keeps no response state: previous_response_id cannot be used. "
        "Send the whole conversation in 'input' (as with store: false).",
        param="previous_response_id",
    )


def view(body: Body) -> ResponsesView:
    checks.nesting(body)  # before the schema and the translation, which recurse
    schemas.RESPONSES.check(body)
    if body.get("previous_response_id"):
        raise no_state()
    chat, shape = to_chat(body)
    messages = chat["messages"]
    if not messages:
        raise invalid_request("'input' holds no message the model can read.", param="input")
    key = body.get("prompt_cache_key")
    return ResponsesView(
        dialect=NAME, model=body["model"], stream=body.get("stream") is True,
        max_tokens=positive_int(body.get("max_output_tokens")),
        input_estimate=estimate_input_tokens(messages, chat.get("tools")), needs=openai.needs_of(chat, messages),
        provider_prefs=_prefs(body), wants_stream_usage=False,
        forward=chat, cache_key=key or None, shape=shape,
    )  # fmt: skip


def _prefs(body: Body) -> dict[str, Any]:
    prefs = body.get("provider")
    return prefs if isinstance(prefs, dict) else {}


def stream_error(err: GatewayError) -> bytes:
    """Without a stream's state: a bare ``error`` event (the stream converter sends ``response.failed``)."""
    return error_event(err, sequence_number=0)


def usage_payload(tokens: Tokens, cost_usd: float, *, estimated: bool = False) -> dict[str, Any]:
    cache_write = tokens.cache_write_5m + tokens.cache_write_1h
    usage: dict[str, Any] = {
        "input_tokens": tokens.input_total,
        "input_tokens_details": {"cached_tokens": tokens.cache_read, "cache_write_tokens": cache_write},
        "output_tokens": tokens.output,
        "output_tokens_details": {"reasoning_tokens": tokens.reasoning},
        "total_tokens": tokens.input_total + tokens.output,
        "cost": cost_usd,
        "cache_write_tokens": cache_write,  # before the official type had it in input_tokens_details; kept
    }
    if estimated:
        usage["estimated"] = True
    return usage
