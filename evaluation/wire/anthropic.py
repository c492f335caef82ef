"""Anthropic Messages: POST {base}/messages, SSE events message_start ... message_stop."""

from __future__ import annotations

from typing import Any

import orjson

from contracts.snapshot import OfferingSnapshot
from evaluation.wire.base import ChatRequest, Reply, StreamDelta, Usage, WireError, read_usage
from evaluation.wire.sdk_headers import anthropic_headers
from evaluation.wire.tools import TOOL_NAME, TOOL_SCHEMA


def _system(request: ChatRequest) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in request.system]
    if request.cache_prefix and blocks:
        blocks[-1]["cache_control"] = {"type": "ephemeral"}
    return blocks


JSON_TOOL = "json_answer"  # JSON mode on the Messages API: one forced tool, as the gateway emulates it


class AnthropicDialect:
    name = "anthropic"

    def build(
        self, offering: OfferingSnapshot, request: ChatRequest, api_key: str
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        body: dict[str, Any] = {
            "model": offering.upstream_model,
            "max_tokens": request.max_tokens,
            "messages": [dict(m) for m in request.messages],
        }
        if request.system:
            body["system"] = _system(request)
        if request.stream:
            body["stream"] = True
        if request.tools:
            body["tools"] = [{"name": TOOL_NAME, "input_schema": TOOL_SCHEMA}]
            body["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        elif request.json_mode:
            body["tools"] = [{"name": JSON_TOOL, "input_schema": {"type": "object"}}]
            body["tool_choice"] = {"type": "tool", "name": JSON_TOOL}
        return f"{offering.base_url.rstrip('/')}/messages", anthropic_headers(api_key), body

    def stream_delta(self, event: str, data: dict[str, Any]) -> StreamDelta:
        kind = data.get("type") or event
        if kind == "message_start":
            message = data.get("message")
            if not isinstance(message, dict):
                raise WireError("message_start without a message")
            return StreamDelta(usage=message.get("usage"))
        if kind == "content_block_delta":
            fields = data.get("delta") or {}
            piece, thought = fields.get("text"), fields.get("thinking")  # text_delta, thinking_delta
            return StreamDelta(
                text=piece if isinstance(piece, str) else "", reasoning=thought if isinstance(thought, str) else ""
            )
        if kind == "message_delta":
            reason = (data.get("delta") or {}).get("stop_reason")
            return StreamDelta(usage=data.get("usage"), finish_reason=reason)
        if kind == "message_stop":
            return StreamDelta(done=True)
        if kind == "error":
            raise WireError(f"error event in stream: {data.get('error')}")
        return StreamDelta()

    def parse_reply(self, data: dict[str, Any]) -> Reply:
        content = data.get("content")
        if not isinstance(content, list):
            raise WireError("response without a content list")
        text = "".join(
            block.get("text", "") for block in content if isinstance(block, dict) and block.get("type") == "text"
        )
        calls = [
            {"name": block.get("name"), "arguments": block.get("input")}
            for block in content
            if isinstance(block, dict) and block.get("type") == "tool_use"
        ]
        answers = [call for call in calls if call["name"] == JSON_TOOL]
        if answers and not text:  # the JSON-mode tool's input is the answer
            text, calls = orjson.dumps(answers[0]["arguments"]).decode(), []
        return Reply(text=text, tool_calls=calls, finish_reason=data.get("stop_reason"))

    def usage(self, offering: OfferingSnapshot, raw: dict[str, Any]) -> Usage:
        return read_usage(offering, raw)
