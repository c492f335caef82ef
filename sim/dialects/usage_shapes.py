"""The usage object of OpenAI-compatible providers, one function per usage dialect."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.usage import SimUsage

Usage = dict[str, Any]


def _base(u: SimUsage) -> Usage:
    return {"prompt_tokens": u.input_total, "completion_tokens": u.output, "total_tokens": u.input_total + u.output}


def openai(u: SimUsage) -> Usage:
    usage = _base(u)
    usage["prompt_tokens_details"] = {"cached_tokens": u.cache_read, "audio_tokens": 0}
    usage["completion_tokens_details"] = {
        "reasoning_tokens": u.reasoning,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    }
    return usage


def deepseek(u: SimUsage) -> Usage:
    usage = _base(u)
    usage["prompt_tokens_details"] = {"cached_tokens": u.cache_read}
    if u.reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": u.reasoning}
    usage["prompt_cache_hit_tokens"] = u.cache_read
    usage["prompt_cache_miss_tokens"] = u.input_total - u.cache_read
    return usage


def moonshot(u: SimUsage) -> Usage:
    usage = _base(u)
    usage["cached_tokens"] = u.cache_read
    return usage


def zhipu(u: SimUsage) -> Usage:
    usage = _base(u)
    usage["prompt_tokens_details"] = {"cached_tokens": u.cache_read}
    return usage


def qwen(u: SimUsage) -> Usage:
    usage = _base(u)
    details: dict[str, Any] = {"cached_tokens": u.cache_read}
    if u.cache_write_5m or u.cache_write_1h:
        details["cache_creation_input_tokens"] = u.cache_write_5m + u.cache_write_1h
        details["cache_creation"] = {"ephemeral_5m_input_tokens": u.cache_write_5m}
        if u.cache_write_1h:  # explicit cache with a 1-hour TTL (Qwen4)
            details["cache_creation"]["ephemeral_1h_input_tokens"] = u.cache_write_1h
        details["cache_type"] = "ephemeral"
    usage["prompt_tokens_details"] = details
    if u.reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": u.reasoning}
    return usage


SHAPES: dict[str, Callable[[SimUsage], Usage]] = {
    "openai": openai,
    "deepseek": deepseek,
    "moonshot": moonshot,
    "zhipu": zhipu,
    "qwen": qwen,
}


def usage_object(usage_dialect: str, usage: SimUsage, cost_usd: float | None = None) -> Usage:
    shaped = SHAPES.get(usage_dialect, openai)(usage)
    if cost_usd is not None:
        shaped["cost"] = cost_usd
        shaped["is_byok"] = False
    return shaped
