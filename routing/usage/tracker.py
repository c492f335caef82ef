"""Per-request usage accumulator: provider usage when it arrives, delivered text for the estimate.

Constant memory per stream: delivered text is folded into two character counts as it passes
(what ``count_text_tokens`` needs), never kept. Forwarded-untouched chunks are not parsed: their
text members are located by a byte scan (``"content":"…"``) and counted in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from contracts.provider_usage import Usage, read_counts, read_reported_cost, to_tokens
from contracts.snapshot import OfferingSnapshot
from contracts.usage import Tokens, UsageSource

# Totals beyond this many times the context window are treated as a provider bug.
ABSURD_FACTOR = 4


@dataclass(slots=True)
class UsageTracker:
    input_estimate: int
    provider_usage: Usage = field(default_factory=dict)
    seen_usage: bool = False
    ascii_chars: int = 0  # delivered text so far, as the two counts count_text_tokens reads
    other_chars: int = 0
    revision: int = 0  # bumped by every merge: a bill computed at one revision holds until the next

    def merge(self, usage: Usage | None) -> None:
        """Later values win: Anthropic's message_delta counts are cumulative, not increments."""
        if isinstance(usage, dict):
            self.revision += 1
            self.seen_usage = True
            self.provider_usage.update({k: v for k, v in usage.items() if v is not None})

    def delivered(self, text: str) -> None:
        if not text:
            return
        if text.isascii():
            self.ascii_chars += len(text)
        else:
            ascii_chars = sum(1 for ch in text if ord(ch) < 128)
            self.ascii_chars += ascii_chars
            self.other_chars += len(text) - ascii_chars

    def delivered_openai(self, data: bytes) -> None:
        """One or more chat-completions chunk payloads forwarded untouched: content and tool arguments."""
        self.delivered_json(data, OPENAI_TEXT_KEYS)

    def delivered_anthropic(self, data: bytes) -> None:
        """One or more ``content_block_delta`` payloads forwarded untouched: text, partial_json, thinking."""
        self.delivered_json(data, ANTHROPIC_TEXT_KEYS)

    def delivered_json(self, data: bytes, keys: tuple[bytes, ...]) -> None:
        """The string members named by ``keys`` (``OPENAI_TEXT_KEYS``, ``ANTHROPIC_TEXT_KEYS``) of JSON
        forwarded untouched; the pass-through converters call this directly, one call less per chunk."""
        size = len(data)
        for key in keys:
            at = data.find(key)
            while at != -1:
                start = at + len(key) + 1
                end = data.find(b'"', start) if start <= size and data[start - 1] == 0x22 else -1
                span = data[start:end]
                if end != -1 and span.find(b"\\") == -1 and span.isascii():
                    self.ascii_chars += end - start  # the common token: plain ASCII, no escapes
                    at = data.find(key, end + 1)
                else:
                    at = data.find(key, self._count_string(data, start - 1))

    def _count_string(self, data: bytes, at: int) -> int:
        """Count the JSON string starting at ``at`` (after optional spaces); the index just past it."""
        while at < len(data) and data[at] in b" \t":
            at += 1
        if data[at : at + 1] != b'"':
            return at  # null, a number: no text
        span, end = json_string_at(data, at + 1)
        if span.isascii() and b"\\" not in span:
            self.ascii_chars += len(span)
        else:
            self.delivered(_decode(span))
        return end + 1

    def output_estimate(self) -> int:
        """count_text_tokens of all delivered text, from the running counts."""
        return (self.ascii_chars + 3) // 4 + self.other_chars if self.ascii_chars or self.other_chars else 0

    def reported_cost(self) -> int | None:
        """The provider's own cost in micro-units, when its usage carried one (``usage.cost``)."""
        return read_reported_cost(self.provider_usage) if self.seen_usage else None

    def tokens(self, offering: OfferingSnapshot, *, complete: bool) -> tuple[Tokens, UsageSource, tuple[str, ...]]:
        """(tokens, usage_source, flags); estimated when the provider's usage never came."""
        has_output = "output_tokens" in self.provider_usage or "completion_tokens" in self.provider_usage
        if self.seen_usage and (complete or has_output):
            counts = read_counts(offering.usage_dialect, self.provider_usage)
            ceiling = ABSURD_FACTOR * (offering.context_window + offering.max_output)
            tokens, flags = to_tokens(counts, cached_in_input=offering.cached_tokens_in_input, ceiling=ceiling)
            if not complete:
                tokens = _with_output_floor(tokens, self.output_estimate())
            return tokens, "provider", flags
        estimate = Tokens(input_uncached=self.input_estimate, output=self.output_estimate())
        return estimate, "estimated", ("usage_missing",)


def _with_output_floor(tokens: Tokens, delivered: int) -> Tokens:
    if tokens.output >= delivered:
        return tokens
    return Tokens(
        tokens.input_uncached,
        tokens.cache_read,
        tokens.cache_write_5m,
        tokens.cache_write_1h,
        delivered,
        tokens.reasoning,
    )


# A JSON member whose key is matched with its quotes is structural: inside a string every quote is
# escaped, so text that merely contains "content": never matches.
OPENAI_TEXT_KEYS = (b'"content":', b'"arguments":')
# What a forwarded-untouched chat chunk delivers in all: its text plus streamed reasoning (DeepSeek's
# reasoning_content, OpenRouter's reasoning), which the provider bills as output. The stream's cut-off at
# its output allowance counts it (routing.relay.answer); translated streams count reasoning where they convert it.
OPENAI_OUTPUT_KEYS = (*OPENAI_TEXT_KEYS, b'"reasoning_content":', b'"reasoning":')
ANTHROPIC_TEXT_KEYS = (b'"text":', b'"partial_json":', b'"thinking":')


def json_string_at(data: bytes, start: int) -> tuple[bytes, int]:
    """The raw body of the JSON string opened just before ``start``, and the index of its closing quote."""
    end = data.find(b'"', start)
    while end != -1:
        slashes = 0
        while end - 1 - slashes >= start and data[end - 1 - slashes] == 0x5C:
            slashes += 1
        if slashes % 2 == 0:
            return data[start:end], end
        end = data.find(b'"', end + 1)
    return data[start:], len(data)


def _decode(span: bytes) -> str:
    try:
        text = orjson.loads(b'"' + span + b'"')
    except orjson.JSONDecodeError:
        return span.decode("utf-8", "replace")
    return text if isinstance(text, str) else ""


def openai_delta_output(chunk: dict[str, Any]) -> str:
    """Text plus reasoning a chat-completions chunk delivers (``OPENAI_OUTPUT_KEYS`` of a parsed chunk)."""
    text = openai_delta_text(chunk)
    choices = chunk.get("choices") or ()
    delta = (choices[0].get("delta") or {}) if choices and isinstance(choices[0], dict) else {}
    reasoning = delta.get("reasoning_content") or delta.get("reasoning") if isinstance(delta, dict) else None
    return text + reasoning if isinstance(reasoning, str) else text


def openai_delta_text(chunk: dict[str, Any]) -> str:
    """Text a chat-completions chunk delivers: content plus streamed tool-call arguments."""
    choices = chunk.get("choices") or ()
    if not choices:
        return ""
    delta = choices[0].get("delta") or {}
    text = delta.get("content") or ""
    for call in delta.get("tool_calls") or ():
        text += (call.get("function") or {}).get("arguments") or ""
    return text if isinstance(text, str) else ""
