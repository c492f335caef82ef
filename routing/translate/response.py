"""Non-streaming responses: OpenAI chat.completion ⇄ Anthropic message."""

from __future__ import annotations

import time
from typing import Any

import orjson

from routing.translate import reasons, structured
from routing.translate.request_o2a import _arguments

Body = dict[str, Any]


def openai_to_anthropic(body: Body, *, message_id: str, model: str, usage: dict[str, Any]) -> Body:
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    content: list[dict[str, Any]] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        content.append({"type": "thinking", "thinking": reasoning, "signature": ""})
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id", ""),
                "name": function.get("name", ""),
                "input": _arguments(function.get("arguments")),
            }
        )
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reasons.to_anthropic(choice.get("finish_reason")) or "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def anthropic_to_openai(body: Body, *, completion_id: str, model: str, usage: dict[str, Any]) -> Body:
    text: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in body.get("content") or []:
        if block.get("type") == "thinking":
            thinking.append(block.get("thinking", ""))
        elif block.get("type") == "text":
            text.append(block.get("text", ""))
        elif block.get("type") == "tool_use" and structured.is_answer(block.get("name")):
            text.append(orjson.dumps(block.get("input") or {}).decode())  # emulated structured output
        elif block.get("type") == "tool_use":
            arguments = orjson.dumps(block.get("input") or {}).decode()
            calls.append(
                {
                    "id": block.get("id", ""),
                    "type": "function",
                    "function": {"name": block.get("name", ""), "arguments": arguments},
                }
            )
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(text) if text or not calls else None,
        "refusal": None,
    }
    if thinking:
        message["reasoning_content"] = "".join(thinking)
    if calls:
        message["tool_calls"] = calls
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _finish(body.get("stop_reason"), calls),
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


def _finish(stop_reason: Any, calls: list[dict[str, Any]]) -> str:
    """An answer that called only the structured-output tool stopped, as far as the caller knows."""
    if stop_reason == "tool_use" and not calls:
        return "stop"
    return reasons.to_openai(stop_reason) or "stop"


def text_of_openai(body: Body) -> str:
    choices = body.get("choices") or [{}]
    message = choices[0].get("message") or {}
    text = message.get("content") or ""
    for call in message.get("tool_calls") or []:
        text += (call.get("function") or {}).get("arguments") or ""
    return text if isinstance(text, str) else ""


def text_of_anthropic(body: Body) -> str:
    parts = []
    for block in body.get("content") or []:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "thinking":
            parts.append(block.get("thinking", ""))
        elif block.get("type") == "tool_use":
            parts.append(orjson.dumps(block.get("input") or {}).decode())
    return "".join(parts)
