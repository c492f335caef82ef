"""The Responses caller's side of relaying: its stream converter and its whole-answer body, from
either upstream dialect (Anthropic answers pass through their chat-completions translation)."""

from __future__ import annotations

from typing import Any

from routing.handoff.call import Call
from routing.translate import response as translate
from routing.translate import responses_json
from routing.translate.responses_chain import AnthropicToResponses
from routing.translate.responses_stream import ChatToResponses
from routing.translate.stream_anthropic import AnthropicToOpenAI
from routing.translate.stream_base import StreamConverter
from routing.wire.responses import ResponsesView


def _view(call: Call) -> ResponsesView:
    assert isinstance(call.view, ResponsesView)
    return call.view


def response_id(call: Call) -> str:
    return f"resp_{call.request_id.removeprefix('gen-')}"


def converter(call: Call, upstream_dialect: str) -> StreamConverter:
    rid, model, shape = response_id(call), call.view.model, _view(call).shape
    if upstream_dialect == "openai":
        return ChatToResponses(call.tracker, call.usage_for_client, response_id=rid, model=model, shape=shape)
    first = AnthropicToOpenAI(call.tracker, call.usage_for_client, completion_id=rid, model=model, include_usage=False)
    second = ChatToResponses(
        call.tracker, call.usage_for_client, response_id=rid, model=model, shape=shape, owns_usage=False
    )
    return AnthropicToResponses(first, second)


def caller_body(call: Call, upstream: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    assert call.offering is not None
    rid = response_id(call)
    if call.offering.dialect == "anthropic":
        upstream = translate.anthropic_to_openai(upstream, completion_id=rid, model=call.view.model, usage=usage)
    return responses_json.response(upstream, _view(call).shape, response_id=rid, model=call.view.model, usage=usage)
