"""Provider usage JSON -> one ``Tokens`` record, per usage dialect: the one reader of provider usage.

The gateway bills with it (routing/usage/tracker.py), the price probe judges billing with it
(evaluation/wire/base.py) and the simulator's tests check their usage shapes against it.

Fields read, per ``usage_dialect`` (docs/catalog-format.md):

- ``openai`` (also ``zhipu``): ``prompt_tokens``, ``prompt_tokens_details.cached_tokens``,
  ``prompt_tokens_details.cache_write_tokens`` (OpenAI-compatible aggregators), ``completion_tokens``,
  ``completion_tokens_details.reasoning_tokens``.
- ``deepseek``: as openai, with the cache read from ``prompt_cache_hit_tokens`` when present.
- ``moonshot`` (Kimi): as openai, with the cache read from the top-level ``cached_tokens`` when present;
  reasoning from ``completion_tokens_details.reasoning_tokens`` when reported.
- ``qwen`` (DashScope): as openai, plus the explicit cache's writes in ``prompt_tokens_details``:
  ``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens``, else
  ``cache_creation_input_tokens`` (all 5-minute writes).
- ``anthropic``: ``input_tokens`` (uncached only), ``cache_read_input_tokens``,
  ``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens`` (else
  ``cache_creation_input_tokens`` as 5-minute writes), ``output_tokens``. The Messages API reports no
  separate thinking count: thinking is billed inside ``output_tokens``, so reasoning stays 0.

OpenAI-style providers count cache reads and writes inside ``prompt_tokens``; Anthropic counts them on
top of ``input_tokens``. ``cached_tokens_in_input`` on the offering says which.

The provider's own cost, where the wire gives it (OpenRouter-style aggregators: ``usage.cost`` in USD), is
read by ``read_reported_cost`` into micro-units; metering books it as the provider cost, with ours beside it.

Two readings: ``read_tokens`` is lenient (a wrong-typed field counts 0, absurd numbers are clamped and
flagged: the gateway must always bill something); ``usage_problem`` names what is malformed, for the
probes, which must notice a provider reporting nonsense.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contracts.usage import MICROS_PER_UNIT, Tokens

Usage = dict[str, Any]
MAX_REPORTED_COST_MICROS = 10**15  # $1e9 for one request is a provider bug; it also keeps a bigint column safe
USAGE_DIALECTS = ("openai", "deepseek", "moonshot", "zhipu", "qwen", "anthropic")


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


def _writes(holder: Usage) -> tuple[int, int]:
    """(5m, 1h) cache writes of an Anthropic-style holder: the split object, else the total as 5m."""
    creation = holder.get("cache_creation")
    if isinstance(creation, dict):
        return _int(creation.get("ephemeral_5m_input_tokens")), _int(creation.get("ephemeral_1h_input_tokens"))
    return _int(holder.get("cache_creation_input_tokens")), 0


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


def _qwen(usage: Usage) -> RawCounts:
    base = _openai(usage)
    details = usage.get("prompt_tokens_details")
    if not isinstance(details, dict):
        return base
    write_5m, write_1h = _writes(details)
    return RawCounts(base.prompt, base.cache_read, write_5m, write_1h, base.output, base.reasoning)


def _anthropic(usage: Usage) -> RawCounts:
    write_5m, write_1h = _writes(usage)
    return RawCounts(
        prompt=_int(usage.get("input_tokens")),
        cache_read=_int(usage.get("cache_read_input_tokens")),
        cache_write_5m=write_5m,
        cache_write_1h=write_1h,
        output=_int(usage.get("output_tokens")),
        reasoning=0,
    )


_READERS: dict[str, Callable[[Usage], RawCounts]] = {
    "openai": _openai,
    "zhipu": _openai,
    "qwen": _qwen,
    "deepseek": _deepseek,
    "moonshot": _moonshot,
    "anthropic": _anthropic,
}


def read_counts(usage_dialect: str, usage: Usage) -> RawCounts:
    """The provider's numbers as reported (unknown dialects read as openai)."""
    return _READERS.get(usage_dialect, _openai)(usage)


def to_tokens(counts: RawCounts, *, cached_in_input: bool, ceiling: int) -> tuple[Tokens, tuple[str, ...]]:
    """Clamp absurd numbers (negative, cache > input, beyond ``ceiling`` when > 0) and flag each clamp."""
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


def read_tokens(
    usage_dialect: str, usage: Usage, *, cached_in_input: bool, ceiling: int = 0
) -> tuple[Tokens, tuple[str, ...]]:
    """Provider usage -> (billable tokens, clamp flags): ``read_counts`` then ``to_tokens``."""
    return to_tokens(read_counts(usage_dialect, usage), cached_in_input=cached_in_input, ceiling=ceiling)


def read_reported_cost(usage: Usage) -> int | None:
    """``usage.cost`` (USD, any dialect) as integer micro-units; None when absent or not a finite
    non-negative number (a malformed cost is never booked: ours stands alone then)."""
    value = usage.get("cost")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    micros = round(value * MICROS_PER_UNIT)
    return micros if micros <= MAX_REPORTED_COST_MICROS else None


# Every count each dialect reads, as a path, and the fields a complete usage object must carry.
_OPENAI_PATHS = (
    ("prompt_tokens",),
    ("prompt_tokens_details", "cached_tokens"),
    ("prompt_tokens_details", "cache_write_tokens"),
    ("completion_tokens",),
    ("completion_tokens_details", "reasoning_tokens"),
)
_CREATION = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "openai": _OPENAI_PATHS,
    "zhipu": _OPENAI_PATHS,
    "deepseek": (*_OPENAI_PATHS, ("prompt_cache_hit_tokens",)),
    "moonshot": (*_OPENAI_PATHS, ("cached_tokens",)),
    "qwen": (
        *_OPENAI_PATHS,
        ("prompt_tokens_details", "cache_creation_input_tokens"),
        *(("prompt_tokens_details", "cache_creation", name) for name in _CREATION),
    ),
    "anthropic": (
        ("input_tokens",),
        ("cache_read_input_tokens",),
        ("cache_creation_input_tokens",),
        *(("cache_creation", name) for name in _CREATION),
        ("output_tokens",),
    ),
}
_REQUIRED = {"anthropic": ("output_tokens",)}
_OPENAI_REQUIRED = ("prompt_tokens", "completion_tokens")


def _problem_at(usage: Usage, path: tuple[str, ...]) -> str | None:
    holder: Any = usage
    for depth, name in enumerate(path[:-1]):
        holder = holder.get(name)
        if holder is None:
            return None
        if not isinstance(holder, dict):
            return f"{'.'.join(path[: depth + 1])} is not an object"
    value = holder.get(path[-1])
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return None
    return f"usage field {'.'.join(path)!r} is not a non-negative integer: {value!r}"


def usage_problem(usage_dialect: str, usage: Any) -> str | None:
    """What makes ``usage`` unfit to bill (missing, wrong shape, a count not a non-negative integer), or None."""
    if not isinstance(usage, dict):
        return "usage is missing or not an object"
    required = _REQUIRED.get(usage_dialect, _OPENAI_REQUIRED)
    missing = [name for name in required if name not in usage]
    if missing:
        return f"usage has no {'/'.join(missing)}"
    for path in _PATHS.get(usage_dialect, _OPENAI_PATHS):
        problem = _problem_at(usage, path)
        if problem:
            return problem
    return None
