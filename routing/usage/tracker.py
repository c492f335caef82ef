"""Per-request usage accumulator: provider usage when it arrives, delivered text for the estimate."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from contracts.provider_usage import Usage, read_counts, to_tokens
from contracts.snapshot import OfferingSnapshot
from contracts.tokens import count_text_tokens
from contracts.usage import Tokens

# Totals beyond this many times the context window are treated as a provider bug.
ABSURD_FACTOR = 4


@dataclass(slots=True)
class UsageTracker:
    input_estimate: int
    provider_usage: Usage = field(default_factory=dict)
    seen_usage: bool = False
    delivered_chars: list[str] = field(default_factory=list)
    # Raw chunk payloads forwarded untouched; parsed only if an estimate is ever needed.
    delivered_openai_chunks: list[bytes] = field(default_factory=list)
    delivered_anthropic_chunks: list[bytes] = field(default_factory=list)

    def merge(self, usage: Usage | None) -> None:
        """Later values win: Anthropic's message_delta counts are cumulative, not increments."""
        if isinstance(usage, dict):
            self.seen_usage = True
            self.provider_usage.update({k: v for k, v in usage.items() if v is not None})

    def delivered(self, text: str) -> None:
        if text:
            self.delivered_chars.append(text)

    def delivered_openai(self, data: bytes) -> None:
        self.delivered_openai_chunks.append(data)

    def delivered_anthropic(self, data: bytes) -> None:
        self.delivered_anthropic_chunks.append(data)

    def output_estimate(self) -> int:
        parts = [*self.delivered_chars]
        parts.extend(_openai_chunk_text(raw) for raw in self.delivered_openai_chunks)
        parts.extend(_anthropic_delta_text(raw) for raw in self.delivered_anthropic_chunks)
        return count_text_tokens("".join(parts))

    def tokens(self, offering: OfferingSnapshot, *, complete: bool) -> tuple[Tokens, str, tuple[str, ...]]:
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


def _openai_chunk_text(raw: bytes) -> str:
    try:
        chunk = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return ""
    return openai_delta_text(chunk) if isinstance(chunk, dict) else ""


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


def _anthropic_delta_text(raw: bytes) -> str:
    try:
        event = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return ""
    delta = event.get("delta") if isinstance(event, dict) else None
    if not isinstance(delta, dict):
        return ""
    value = delta.get("text") or delta.get("partial_json") or delta.get("thinking") or ""
    return value if isinstance(value, str) else ""
