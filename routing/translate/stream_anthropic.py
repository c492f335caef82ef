"""Anthropic event streams: pass-through to an Anthropic caller, or translated for an OpenAI caller."""

from __future__ import annotations

import time
from typing import Any

import orjson

from routing.http.sse import SseEvent, frame
from routing.translate import reasons, structured
from routing.translate.stream_base import UsagePayload
from routing.usage.tracker import ANTHROPIC_TEXT_KEYS, UsageTracker


def _delta_text(delta: dict[str, Any]) -> str:
    value = delta.get("text") or delta.get("partial_json") or delta.get("thinking") or ""
    return value if isinstance(value, str) else ""


class AnthropicPassthrough:
    """Forward events as received; usage captured from message_start and message_delta (cumulative)."""

    def __init__(self, tracker: UsageTracker, usage_payload: UsagePayload) -> None:
        self.tracker = tracker
        self.done = False
        self.upstream_error = False
        self._payload = usage_payload

    def feed(self, event: SseEvent) -> bytes:
        if event.event == b"content_block_delta":
            self.tracker.delivered_json(event.data, ANTHROPIC_TEXT_KEYS)  # hot path: forwarded untouched, not parsed
            return event.raw
        data = orjson.loads(event.data) if event.data else {}
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "content_block_delta":
            self.tracker.delivered(_delta_text(data.get("delta") or {}))
        elif kind == "message_start":
            self.tracker.merge((data.get("message") or {}).get("usage"))
        elif kind == "message_delta":
            self.tracker.merge(data.get("usage"))
            data["usage"] = self._payload()
            return frame(orjson.dumps(data), b"message_delta")
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            self.upstream_error = True
        return event.raw

    def finish(self) -> bytes:
        return b""


class AnthropicToOpenAI:
    """Anthropic events -> OpenAI chat.completion.chunk stream (+ usage chunk, + [DONE])."""

    def __init__(
        self, tracker: UsageTracker, usage_payload: UsagePayload, *, completion_id: str, model: str, include_usage: bool
    ) -> None:
        self.tracker = tracker
        self.done = False
        self.upstream_error = False
        self._payload = usage_payload
        self._base = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        self._include_usage = include_usage
        self._tools: dict[int, int] = {}  # Anthropic block index -> OpenAI tool call index
        self._answers: set[int] = set()  # block indexes of the structured-output tool: streamed as content

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return frame(orjson.dumps({**self._base, "choices": [choice]}))

    def feed(self, event: SseEvent) -> bytes:
        data = orjson.loads(event.data) if event.data else {}
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "message_start":
            self.tracker.merge((data.get("message") or {}).get("usage"))
            return self._chunk({"role": "assistant", "content": ""})
        if kind == "content_block_start":
            return self._block_start(data)
        if kind == "content_block_delta":
            return self._block_delta(data)
        if kind == "message_delta":
            self.tracker.merge(data.get("usage"))
            return self._chunk({}, self._finish((data.get("delta") or {}).get("stop_reason")))
        if kind == "message_stop":
            return self._end()
        if kind == "error":
            self.upstream_error = True
        return b""

    def _block_start(self, data: dict[str, Any]) -> bytes:
        block = data.get("content_block") or {}
        if block.get("type") != "tool_use":
            return b""
        if structured.is_answer(block.get("name")):
            self._answers.add(int(data.get("index", 0)))
            return b""
        position = len(self._tools)
        self._tools[int(data.get("index", 0))] = position
        call = {
            "index": position,
            "id": block.get("id", ""),
            "type": "function",
            "function": {"name": block.get("name", ""), "arguments": ""},
        }
        return self._chunk({"tool_calls": [call]})

    def _block_delta(self, data: dict[str, Any]) -> bytes:
        delta = data.get("delta") or {}
        text = _delta_text(delta)
        self.tracker.delivered(text)
        if delta.get("type") == "text_delta":
            return self._chunk({"content": text})
        if delta.get("type") == "thinking_delta":
            return self._chunk({"reasoning_content": text})
        if delta.get("type") == "input_json_delta" and int(data.get("index", 0)) in self._answers:
            return self._chunk({"content": text}) if text else b""
        if delta.get("type") == "input_json_delta":
            position = self._tools.get(int(data.get("index", 0)), 0)
            return self._chunk({"tool_calls": [{"index": position, "function": {"arguments": text}}]})
        return b""

    def _finish(self, stop_reason: Any) -> str:
        if stop_reason == "tool_use" and self._answers and not self._tools:
            return "stop"  # only the structured-output tool was called: an answer, not a call
        return reasons.to_openai(stop_reason) or "stop"

    def _end(self) -> bytes:
        if self.done:
            return b""
        self.done = True
        out = b""
        if self._include_usage:
            out = frame(orjson.dumps({**self._base, "choices": [], "usage": self._payload()}))
        return out + b"data: [DONE]\n\n"

    def finish(self) -> bytes:
        return self._end()
