"""OpenAI chunk streams: pass-through to an OpenAI caller, or translated for an Anthropic caller."""

from __future__ import annotations

from typing import Any

import orjson

from routing.http.sse import SseEvent, frame
from routing.translate import reasons
from routing.translate.stream_base import UsagePayload
from routing.usage.tracker import OPENAI_OUTPUT_KEYS, UsageTracker, openai_delta_output

DONE = b"[DONE]"


def _may_carry_usage(data: bytes) -> bool:
    # find, not ``in``: see routing.usage.answer_facts (runs for every relayed chunk)
    if data.find(b'"usage":null') != -1:  # the common token chunk (the gateway asks for stream usage)
        return False
    return data.find(b'"usage"') != -1 and data.find(b'"usage": null') == -1


class OpenAIPassthrough:
    """Forward chunks as received; capture usage; show it only if the client asked for it."""

    def __init__(self, tracker: UsageTracker, usage_payload: UsagePayload, *, client_wants_usage: bool) -> None:
        self.tracker = tracker
        self.done = False
        self.upstream_error = False
        self._payload = usage_payload
        self._wants_usage = client_wants_usage

    def feed(self, event: SseEvent) -> bytes:
        if event.data == DONE:
            self.done = True
            return b"data: [DONE]\n\n"
        data = event.data
        # the common token chunk first, without a call: "usage":null (the gateway asks for stream usage)
        if (data.find(b'"usage":null') != -1 or not _may_carry_usage(data)) and data.find(b'"error"') == -1:
            self.tracker.delivered_json(data, OPENAI_OUTPUT_KEYS)  # hot path: forwarded untouched, not parsed
            return event.raw
        chunk = orjson.loads(data)
        if "error" in chunk:
            self.upstream_error = True
            return event.raw
        usage = chunk.get("usage")
        if not usage:
            self.tracker.delivered(openai_delta_output(chunk))
            return event.raw
        self.tracker.merge(usage)
        self.tracker.delivered(openai_delta_output(chunk))
        return self._rewrite_usage(chunk)

    def _rewrite_usage(self, chunk: dict[str, Any]) -> bytes:
        if self._wants_usage:
            chunk["usage"] = self._payload()
        elif not chunk.get("choices"):
            return b""
        else:
            chunk["usage"] = None
        return frame(orjson.dumps(chunk))

    def finish(self) -> bytes:
        return b"" if self.done else b"data: [DONE]\n\n"


class OpenAIToAnthropic:
    """OpenAI chunks -> Anthropic message_start / content_block_* / message_delta / message_stop."""

    def __init__(self, tracker: UsageTracker, usage_payload: UsagePayload, *, message_id: str, model: str) -> None:
        self.tracker = tracker
        self.done = False
        self.upstream_error = False
        self._payload = usage_payload
        self._id = message_id
        self._model = model
        self._started = False
        self._index = -1
        self._open: str | None = None  # "text" or the tool call's OpenAI index as a string
        self._stop: str | None = None

    def _start(self) -> bytes:
        self._started = True
        message: dict[str, Any] = {
            "id": self._id,
            "type": "message",
            "role": "assistant",
            "model": self._model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": self.tracker.input_estimate, "output_tokens": 0},
        }
        return _event("message_start", {"type": "message_start", "message": message})

    def _close_block(self) -> bytes:
        if self._open is None:
            return b""
        self._open = None
        return _event("content_block_stop", {"type": "content_block_stop", "index": self._index})

    def _open_block(self, key: str, block: dict[str, Any]) -> bytes:
        out = self._close_block()
        self._index += 1
        self._open = key
        return out + _event(
            "content_block_start", {"type": "content_block_start", "index": self._index, "content_block": block}
        )

    def _text(self, text: str) -> bytes:
        out = b"" if self._open == "text" else self._open_block("text", {"type": "text", "text": ""})
        delta = {"type": "content_block_delta", "index": self._index, "delta": {"type": "text_delta", "text": text}}
        return out + _event("content_block_delta", delta)

    def _tool(self, call: dict[str, Any]) -> bytes:
        key = str(call.get("index", 0))
        function = call.get("function") or {}
        out = b""
        if self._open != key:
            block = {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_{key}",
                "name": function.get("name", ""),
                "input": {},
            }
            out = self._open_block(key, block)
        arguments = function.get("arguments") or ""
        if arguments:
            delta = {"type": "input_json_delta", "partial_json": arguments}
            out += _event("content_block_delta", {"type": "content_block_delta", "index": self._index, "delta": delta})
        return out

    def feed(self, event: SseEvent) -> bytes:
        if event.data == DONE:
            return self._end()
        chunk = orjson.loads(event.data)
        if "error" in chunk:
            self.upstream_error = True
            return b""
        out = b"" if self._started else self._start()
        self.tracker.merge(chunk.get("usage"))
        for choice in chunk.get("choices") or ():
            out += self._choice(choice)
        return out

    def _thinking(self, text: str) -> bytes:
        block = {"type": "thinking", "thinking": "", "signature": ""}
        out = b"" if self._open == "thinking" else self._open_block("thinking", block)
        delta = {
            "type": "content_block_delta",
            "index": self._index,
            "delta": {"type": "thinking_delta", "thinking": text},
        }
        return out + _event("content_block_delta", delta)

    def _choice(self, choice: dict[str, Any]) -> bytes:
        delta = choice.get("delta") or {}
        out = b""
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self.tracker.delivered(reasoning)
            out += self._thinking(reasoning)
        if delta.get("content"):
            self.tracker.delivered(delta["content"])
            out += self._text(delta["content"])
        for call in delta.get("tool_calls") or ():
            self.tracker.delivered((call.get("function") or {}).get("arguments") or "")
            out += self._tool(call)
        if choice.get("finish_reason"):
            self._stop = reasons.to_anthropic(choice["finish_reason"])
        return out

    def _end(self) -> bytes:
        if self.done:
            return b""
        self.done = True
        out = (b"" if self._started else self._start()) + self._close_block()
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": self._stop or "end_turn", "stop_sequence": None},
            "usage": self._payload(),
        }
        return out + _event("message_delta", delta) + _event("message_stop", {"type": "message_stop"})

    def finish(self) -> bytes:
        return self._end()


def _event(name: str, data: dict[str, Any]) -> bytes:
    return frame(orjson.dumps(data), name.encode())
