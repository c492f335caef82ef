"""OpenAI Chat Completions: POST {base}/chat/completions, SSE `data:` chunks ending with [DONE]."""

from __future__ import annotations

from typing import Any

from contracts.snapshot import OfferingSnapshot
from evaluation.wire.base import ChatRequest, Reply, StreamDelta, Usage, WireError, read_usage
from evaluation.wire.sdk_headers import openai_headers
from evaluation.wire.tools import TOOL_NAME, TOOL_SCHEMA

# Delta fields carrying streamed reasoning text: DeepSeek, Qwen, Kimi, MiniMax, vLLM and SGLang use
# `reasoning_content`; OpenRouter (and Groq) `reasoning`.
REASONING_FIELDS = ("reasoning_content", "reasoning")


def _reasoning(delta: dict[str, Any]) -> str:
    return "".join(piece for name in REASONING_FIELDS if isinstance(piece := delta.get(name), str))


def _system_message(blocks: tuple[str, ...]) -> dict[str, Any]:
    if len(blocks) == 1:
        return {"role": "system", "content": blocks[0]}
    return {"role": "system", "content": [{"type": "text", "text": block} for block in blocks]}


class OpenAIDialect:
    name = "openai"

    def build(
        self, offering: OfferingSnapshot, request: ChatRequest, api_key: str
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        messages = ([_system_message(request.system)] if request.system else []) + [dict(m) for m in request.messages]
        body: dict[str, Any] = {
            "model": offering.upstream_model,
            "messages": messages,
            "max_tokens": request.max_tokens,
        }
        if request.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [{"type": "function", "function": {"name": TOOL_NAME, "parameters": TOOL_SCHEMA}}]
            body["tool_choice"] = {"type": "function", "function": {"name": TOOL_NAME}}
        if request.json_mode:
            body["response_format"] = {"type": "json_object"}
        return f"{offering.base_url.rstrip('/')}/chat/completions", openai_headers(api_key), body

    def stream_delta(self, event: str, data: dict[str, Any]) -> StreamDelta:
        delta = StreamDelta(usage=data.get("usage") or None)
        choices = data.get("choices")
        if not isinstance(choices, list):
            raise WireError("chunk without a choices list")
        for choice in choices:
            fields = choice.get("delta") or {}
            piece = fields.get("content")
            if isinstance(piece, str):
                delta.text += piece
            delta.reasoning += _reasoning(fields)
            if choice.get("finish_reason"):
                delta.finish_reason = str(choice["finish_reason"])
        return delta

    def parse_reply(self, data: dict[str, Any]) -> Reply:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise WireError("response without choices")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise WireError("choice without a message")
        calls = [
            {
                "name": (call.get("function") or {}).get("name"),
                "arguments": (call.get("function") or {}).get("arguments"),
            }
            for call in message.get("tool_calls") or []
            if isinstance(call, dict)
        ]
        text = message.get("content") or ""
        if not isinstance(text, str):
            raise WireError("message content is not a string")
        return Reply(text=text, tool_calls=calls, finish_reason=choices[0].get("finish_reason"))

    def usage(self, offering: OfferingSnapshot, raw: dict[str, Any]) -> Usage:
        return read_usage(offering, raw)
