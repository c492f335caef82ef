"""Provider usage fields -> one Tokens record, per usage dialect.

OpenAI-style providers count cache reads inside ``prompt_tokens``; Anthropic counts
them on top of ``input_tokens``. ``cached_tokens_in_input`` on the offering says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contracts.usage import Tokens

Usage = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RawCounts:
    prompt: int  # input as the provider reported it
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output: int
    reasoning: int


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value)


def _nested(usage: Usage, outer: str, inner: str) -> int:
    details = usage.get(outer)
    return _int(details.get(inner)) if isinstance(details, dict) else 0


def _openai(usage: Usage) -> RawCounts:
    return RawCounts(
        prompt=_int(usage.get("prompt_tokens")),
        cache_read=_nested(usage, "prompt_tokens_details", "cached_tokens"),
        cache_write_5m=_nested(usage, "prompt_tokens_details", "cache_write_tokens"),
        cache_write_1h=0,
        output=_int(usage.get("completion_tokens")),
        reasoning=_nested(usage, "completion_tokens_details", "reasoning_tokens"),
    )


def _deepseek(usage: Usage) -> RawCounts:
    base = _openai(usage)
    hit = _int(usage.get("prompt_cache_hit_tokens")) if "prompt_cache_hit_tokens" in usage else base.cache_read
    return RawCounts(base.prompt, hit, 0, 0, base.output, base.reasoning)


def _moonshot(usage: Usage) -> RawCounts:
    base = _openai(usage)
    cached = _int(usage.get("cached_tokens")) if "cached_tokens" in usage else base.cache_read
    return RawCounts(base.prompt, cached, 0, 0, base.output, base.reasoning)


def _anthropic(usage: Usage) -> RawCounts:
    creation = usage.get("cache_creation")
    if isinstance(creation, dict):
        write_5m = _int(creation.get("ephemeral_5m_input_tokens"))
        write_1h = _int(creation.get("ephemeral_1h_input_tokens"))
    else:
        write_5m, write_1h = _int(usage.get("cache_creation_input_tokens")), 0
    return RawCounts(
        prompt=_int(usage.get("input_tokens")),
        cache_read=_int(usage.get("cache_read_input_tokens")),
        cache_write_5m=write_5m,
        cache_write_1h=write_1h,
        output=_int(usage.get("output_tokens")),
        reasoning=0,
    )


_READERS = {
    "openai": _openai,
    "zhipu": _openai,
    "qwen": _openai,
    "deepseek": _deepseek,
    "moonshot": _moonshot,
    "anthropic": _anthropic,
}


def read_counts(usage_dialect: str, usage: Usage) -> RawCounts:
    return _READERS.get(usage_dialect, _openai)(usage)


def to_tokens(counts: RawCounts, *, cached_in_input: bool, ceiling: int) -> tuple[Tokens, tuple[str, ...]]:
    """Clamp absurd numbers (negative, cache > input, beyond ``ceiling``) and flag each clamp."""
    flags: list[str] = []
    values = [counts.prompt, counts.cache_read, counts.cache_write_5m, counts.cache_write_1h, counts.output]
    if any(v < 0 for v in values) or counts.reasoning < 0:
        flags.append("clamped_negative")
    prompt, read, w5, w1, output = (max(0, v) for v in values)
    reasoning = min(max(0, counts.reasoning), output)
    if cached_in_input:
        if read + w5 + w1 > prompt:
            flags.append("clamped_cache_read")
            read = min(read, prompt)
            w5 = min(w5, prompt - read)
            w1 = min(w1, prompt - read - w5)
        uncached = prompt - read - w5 - w1
    else:
        uncached = prompt
    if ceiling > 0 and uncached + read + w5 + w1 + output > ceiling:
        flags.append("clamped_absurd")
        uncached, read, w5, w1, output = (min(v, ceiling) for v in (uncached, read, w5, w1, output))
        reasoning = min(reasoning, output)
    tokens = Tokens(uncached, read, w5, w1, output, reasoning)
    return tokens, tuple(flags)
