"""Chat-completions chunks -> the Responses event stream.

``response.created`` and ``response.in_progress`` first; then one output item at a time
(reasoning, message, function or custom tool calls), each opened with ``output_item.added`` and
closed with its ``...done`` events and ``output_item.done``; ``response.completed`` (or
``response.incomplete``) with the usage last. A failure is ``response.failed``. Every event
carries its ``sequence_number``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from routing.http.errors import GatewayError
from routing.http.sse import SseEvent
from routing.translate import responses_events as ev
from routing.translate.responses_request import ResponsesShape
from routing.translate.responses_tools import ToolRef
from routing.translate.stream_base import UsagePayload
from routing.usage.tracker import UsageTracker, openai_delta_text

Body = dict[str, Any]
DONE = b"[DONE]"


@dataclass(slots=True)
class _Item:
    kind: str  # "reasoning" | "message" | "call"
    index: int  # output_index
    item_id: str
    parts: list[str] = field(default_factory=list)
    ref: ToolRef | None = None
    call_id: str = ""

    @property
    def text(self) -> str:
        return "".join(self.parts)


class ChatToResponses:
    """``owns_usage``: this converter reads the upstream's usage and delivered text itself (an
    OpenAI upstream); False when it follows another converter that already did (Anthropic)."""

    def __init__(
        self, tracker: UsageTracker, usage_payload: UsagePayload, *, response_id: str, model: str,
        shape: ResponsesShape, owns_usage: bool = True,
    ) -> None:  # fmt: skip
        self.tracker = tracker
        self.done = False
        self.upstream_error = False
        self._payload = usage_payload
        self._id, self._model, self._shape = response_id, model, shape
        self._owns = owns_usage
        self._seq = -1
        self._created = time.time()
        self._output: list[Body] = []
        self._open: _Item | None = None
        self._calls: dict[int, _Item] = {}
        self._finish: str | None = None

    def _event(self, kind: str, **fields: Any) -> bytes:
        self._seq += 1
        return ev.event(kind, self._seq, **fields)

    def _response(self, status: str, **extra: Any) -> Body:
        return ev.envelope(
            self._id, self._model, self._shape, status=status, output=[o for o in self._output if o],
            created_at=self._created,
            usage=extra.pop("usage", None), **extra,
        )  # fmt: skip

    def _start(self) -> bytes:
        if self._seq >= 0:
            return b""
        response = self._response("in_progress")
        return self._event("response.created", response=response) + self._event(
            "response.in_progress", response=response
        )

    def feed(self, event: SseEvent) -> bytes:
        if event.data == DONE:
            return self._end()
        chunk = orjson.loads(event.data)
        return self.feed_chunk(chunk) if isinstance(chunk, dict) else b""

    def feed_chunk(self, chunk: Body) -> bytes:
        if "error" in chunk:
            self.upstream_error = True
            raw = chunk.get("error")
            error: Body = raw if isinstance(raw, dict) else {}
            message = str(error.get("message") or "The provider failed mid-answer.")
            return self.fail(GatewayError(502, str(error.get("code") or "upstream_error"), message))
        out = self._start()
        if self._owns:
            self.tracker.merge(chunk.get("usage"))
            self.tracker.delivered(openai_delta_text(chunk))
        for choice in chunk.get("choices") or ():
            out += self._choice(choice)
        return out

    def _choice(self, choice: Body) -> bytes:
        delta = choice.get("delta") or {}
        out = b""
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            if self._owns:
                self.tracker.delivered(reasoning)
            out += self._reasoning(reasoning)
        if isinstance(delta.get("content"), str) and delta["content"]:
            out += self._text(delta["content"])
        for call in delta.get("tool_calls") or ():
            out += self._tool(call)
        if choice.get("finish_reason"):
            self._finish = choice["finish_reason"]
        return out

    def _reasoning(self, text: str) -> bytes:
        out = b""
        if self._open is None or self._open.kind != "reasoning":
            out = self._begin("reasoning", "rs")
            out += self._event("response.content_part.added", **self._at(), part={"type": "reasoning_text", "text": ""})
        assert self._open is not None
        self._open.parts.append(text)
        return out + self._event("response.reasoning_text.delta", **self._at(), delta=text)

    def _text(self, text: str) -> bytes:
        out = b""
        if self._open is None or self._open.kind != "message":
            out = self._begin("message", "msg")
            out += self._event("response.content_part.added", **self._at(), part=ev.text_part(""))
        assert self._open is not None
        self._open.parts.append(text)
        return out + self._event("response.output_text.delta", **self._at(), delta=text, logprobs=[])

    def _tool(self, call: Body) -> bytes:
        position = int(call.get("index", 0))
        function = call.get("function") or {}
        item, out = self._calls.get(position), b""
        if item is None:
            ref = self._shape.tools.ref(str(function.get("name", "")))
            call_id = str(call.get("id") or f"call_{self._id}_{position}")
            out = self._begin("call", "fc", ref=ref, call_id=call_id)
            assert self._open is not None
            item = self._calls[position] = self._open
        arguments = function.get("arguments") or ""
        if not arguments:
            return out
        item.parts.append(arguments)
        if item.ref is not None and item.ref.kind == "function" and item is self._open:
            delta = {"item_id": item.item_id, "output_index": item.index, "delta": arguments}
            out += self._event("response.function_call_arguments.delta", **delta)
        return out

    def _at(self) -> Body:
        assert self._open is not None
        return {"item_id": self._open.item_id, "output_index": self._open.index, "content_index": 0}

    def _begin(self, kind: str, prefix: str, ref: ToolRef | None = None, call_id: str = "") -> bytes:
        out = self._close()
        index = len(self._output)
        self._open = _Item(kind, index, f"{prefix}_{self._id}_{index}", ref=ref, call_id=call_id)
        self._output.append({})  # reserved: the item's final form replaces it on close
        return out + self._event("response.output_item.added", output_index=index, item=self._item("in_progress"))

    def _item(self, status: str) -> Body:
        item = self._open
        assert item is not None
        text = item.text if status == "completed" else None
        if item.kind == "reasoning":
            return ev.reasoning_item(item.item_id, text, status)
        if item.kind == "message":
            return ev.message_item(item.item_id, text, status)
        assert item.ref is not None
        return ev.call_item(item.ref, item.item_id, item.call_id, item.text if status == "completed" else "", status)

    def _close(self) -> bytes:
        item = self._open
        if item is None:
            return b""
        out = self._close_content(item)
        done = self._item("completed")
        self._output[item.index] = done
        self._open = None
        return out + self._event("response.output_item.done", output_index=item.index, item=done)

    def _close_content(self, item: _Item) -> bytes:
        at = {"item_id": item.item_id, "output_index": item.index}
        if item.kind == "reasoning":
            part = {"type": "reasoning_text", "text": item.text}
            return self._event("response.reasoning_text.done", **at, content_index=0, text=item.text) + self._event(
                "response.content_part.done", **at, content_index=0, part=part
            )
        if item.kind == "message":
            done = self._event("response.output_text.done", **at, content_index=0, text=item.text, logprobs=[])
            return done + self._event("response.content_part.done", **at, content_index=0, part=ev.text_part(item.text))
        assert item.ref is not None
        if item.ref.kind == "custom":
            text = ev.custom_input(item.text)
            delta = self._event("response.custom_tool_call_input.delta", **at, delta=text)
            return delta + self._event("response.custom_tool_call_input.done", **at, input=text)
        return self._event("response.function_call_arguments.done", **at, name=item.ref.name, arguments=item.text)

    def _end(self) -> bytes:
        if self.done:
            return b""
        self.done = True
        out = self._start() + self._close()
        if self._finish == "length":
            response = self._response("incomplete", usage=self._payload(), incomplete="max_output_tokens")
            return out + self._event("response.incomplete", response=response)
        return out + self._event("response.completed", response=self._response("completed", usage=self._payload()))

    def finish(self) -> bytes:
        return self._end()

    def fail(self, error: GatewayError) -> bytes:
        """End the stream in-band: the open item stays unfinished, ``response.failed`` says why."""
        self.done = True
        response = self._response("failed", usage=self._payload(), error=ev.error_object(error))
        return self._start() + self._event("response.failed", response=response)
