"""What a generation record keeps of the answer besides tokens: the provider's response id, its
finish reason, and the thinking it streamed (for dialects whose usage has no reasoning count).

Cheap on the hot path: an SSE event is parsed only when its bytes can carry one of these facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import orjson

from contracts.usage import Prices, Tokens
from routing.http.sse import SseEvent

MAX_FIELD_CHARS = 64  # stored as given, cut to the record's column width
_NULL_FINISH = (b'"finish_reason":null', b'"finish_reason": null')
_THINKING = (
    b'"thinking_delta"',
    b'"reasoning_content":"',
    b'"reasoning_content": "',
    b'"reasoning":"',
    b'"reasoning": "',  # a provider that writes JSON with spaces
)
# Every event the exact checks below would parse matches these (a finish reason not written as null,
# the thinking markers' common prefixes, the id until it is known); only a match is checked exactly.
_MAY_CARRY = re.compile(rb'"(?:stop_reason"|finish_reason"(?!:null)|thinking_delta"|reasoning)')
_MAY_CARRY_OR_ID = re.compile(rb'"(?:id"|stop_reason"|finish_reason"(?!:null)|thinking_delta"|reasoning)')


@dataclass(slots=True)
class AnswerFacts:
    upstream_id: str = ""
    finish_reason: str = ""
    # Characters of streamed or returned thinking text, counted as one text at the end (pieces counted
    # one by one would each round up): ASCII and other, as contracts.tokens counts them.
    thinking_ascii: int = 0
    thinking_other: int = 0

    @property
    def thinking_tokens(self) -> int:
        return (self.thinking_ascii + 3) // 4 + self.thinking_other

    def observe(self, events: list[SseEvent]) -> None:
        for event in events:
            data = event.data
            if (_MAY_CARRY if self.upstream_id else _MAY_CARRY_OR_ID).search(data) is None:
                continue  # the common token event: one scan, not four
            if (not self.upstream_id and data.find(b'"id"') != -1) or _may_finish(data) or _may_think(data):
                self._observe_chunk(data)

    def observe_answer(self, body: dict[str, Any]) -> None:
        """A whole (non-streamed) answer in either dialect."""
        self._take_id(body.get("id"))
        choices = body.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            choice = choices[0]
            self._take_finish(choice.get("finish_reason"))
            message = choice.get("message")
            if isinstance(message, dict):
                self._count(message.get("reasoning_content") or message.get("reasoning"))
        self._take_finish(body.get("stop_reason"))
        for block in body.get("content") or ():
            if isinstance(block, dict) and block.get("type") == "thinking":
                self._count(block.get("thinking"))

    def _observe_chunk(self, data: bytes) -> None:
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if not isinstance(chunk, dict):
            return
        message = chunk.get("message")
        self._take_id(message.get("id") if isinstance(message, dict) else chunk.get("id"))
        delta = chunk.get("delta")
        if isinstance(delta, dict):  # Anthropic: message_delta's stop_reason, content_block_delta's thinking
            self._take_finish(delta.get("stop_reason"))
            self._count(delta.get("thinking"))
        choices = chunk.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            self._take_finish(choices[0].get("finish_reason"))
            choice_delta = choices[0].get("delta")
            if isinstance(choice_delta, dict):
                self._count(choice_delta.get("reasoning_content") or choice_delta.get("reasoning"))

    def _take_id(self, value: Any) -> None:
        if not self.upstream_id and isinstance(value, str):
            self.upstream_id = value[:MAX_FIELD_CHARS]

    def _take_finish(self, value: Any) -> None:
        if isinstance(value, str) and value:
            self.finish_reason = value[:MAX_FIELD_CHARS]

    def _count(self, text: Any) -> None:
        if not isinstance(text, str) or not text:
            return
        if text.isascii():
            self.thinking_ascii += len(text)
            return
        ascii_chars = sum(1 for ch in text if ord(ch) < 128)
        self.thinking_ascii += ascii_chars
        self.thinking_other += len(text) - ascii_chars


# The exact checks, for events the one-scan filter (_MAY_CARRY) let through: ``find``, not ``in`` (on
# bytes, ``in`` first tries its operand as an integer and builds and drops a TypeError message each
# time: ~3x the scan itself).
def _may_finish(data: bytes) -> bool:
    if data.find(_NULL_FINISH[0]) != -1:  # the common token chunk: two scans, not three
        return data.find(b'"stop_reason"') != -1
    if data.find(b'"stop_reason"') != -1:
        return True
    return data.find(b'"finish_reason"') != -1 and data.find(_NULL_FINISH[1]) == -1


def _may_think(data: bytes) -> bool:
    if data.find(_THINKING[0]) != -1:
        return True
    # the other markers share this prefix: one scan for the event that has none
    if data.find(b'"reasoning') == -1:
        return False
    return any(data.find(marker) != -1 for marker in _THINKING[1:])  # rare: an event that has one


def with_thinking(tokens: Tokens, facts: AnswerFacts, prices: Prices | None) -> tuple[Tokens, tuple[str, ...]]:
    """Reasoning for dialects that bill thinking as output without counting it (Claude, Kimi): the
    thinking text's tokens, within the output. Only where reasoning is priced as output, so the cost
    stays exactly what the provider bills; flagged ``reasoning_estimated``."""
    if tokens.reasoning or not facts.thinking_tokens or tokens.output <= 0:
        return tokens, ()
    if prices is not None and prices.reasoning is not None:
        return tokens, ()
    return replace(tokens, reasoning=min(facts.thinking_tokens, tokens.output)), ("reasoning_estimated",)
