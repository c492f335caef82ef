"""Provider usage fields -> one Usage, per usage dialect (docs/catalog-format.md `usage_dialect`)."""

from __future__ import annotations

from typing import Any

from contracts.snapshot import OfferingSnapshot
from evaluation.wire.base import Usage, WireError


def _int(raw: dict[str, Any], key: str) -> int:
    value = raw.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise WireError(f"usage field {key!r} is not a non-negative integer: {value!r}")
    return value


def _details_cached(raw: dict[str, Any]) -> int:
    details = raw.get("prompt_tokens_details") or {}
    if not isinstance(details, dict):
        raise WireError("prompt_tokens_details is not an object")
    return _int(details, "cached_tokens")


def _cached_openai_like(usage_dialect: str, raw: dict[str, Any]) -> int:
    if usage_dialect == "deepseek":
        return _int(raw, "prompt_cache_hit_tokens")
    if usage_dialect == "moonshot":
        return _int(raw, "cached_tokens") or _details_cached(raw)
    return _details_cached(raw)


def _cost(raw: dict[str, Any]) -> int | None:
    """Some providers report the request's cost; we accept micro-units or a USD number."""
    if isinstance(raw.get("cost_micros"), int):
        return int(raw["cost_micros"])
    cost = raw.get("cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return round(float(cost) * 1_000_000)
    return None


def normalize_usage(target: OfferingSnapshot, raw: Any) -> Usage:
    if not isinstance(raw, dict):
        raise WireError("usage is missing or not an object")
    if target.usage_dialect == "anthropic" or "input_tokens" in raw:
        uncached = _int(raw, "input_tokens")
        cached = _int(raw, "cache_read_input_tokens")
        write = _int(raw, "cache_creation_input_tokens")
        if "output_tokens" not in raw:
            raise WireError("usage has no output_tokens")
        return Usage(uncached + cached + write, cached, write, _int(raw, "output_tokens"), _cost(raw))
    if "prompt_tokens" not in raw or "completion_tokens" not in raw:
        raise WireError("usage has no prompt_tokens/completion_tokens")
    prompt = _int(raw, "prompt_tokens")
    cached = _cached_openai_like(target.usage_dialect, raw)
    total = prompt if target.cached_tokens_in_input else prompt + cached
    if cached > total:
        raise WireError(f"cached tokens {cached} exceed input tokens {total}")
    return Usage(total, cached, 0, _int(raw, "completion_tokens"), _cost(raw))
