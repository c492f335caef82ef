"""Thinking budgets ⇄ reasoning effort: Anthropic ``thinking`` and OpenAI ``reasoning_effort``.

Effort buckets map to budgets and back by thresholds between them, so a round trip keeps the bucket.
"""

from __future__ import annotations

from typing import Any

Body = dict[str, Any]
MIN_BUDGET = 1024  # the Messages API's smallest budget_tokens
BUDGETS = {"minimal": MIN_BUDGET, "low": 2048, "medium": 8192, "high": 24576}
_THRESHOLDS = ((2048, "low"), (16384, "medium"))  # budget below -> effort; above the last: high


def effort_for(thinking: Any) -> str | None:
    """``thinking`` of a Messages request -> ``reasoning_effort`` (None when it is off or absent)."""
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "adaptive"):
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int):
        return "medium"
    return next((effort for limit, effort in _THRESHOLDS if budget < limit), "high")


def _budget(body: Body) -> int | None:
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        if reasoning.get("enabled") is False or reasoning.get("effort") == "none":
            return None
        if isinstance(reasoning.get("max_tokens"), int):
            return max(MIN_BUDGET, int(reasoning["max_tokens"]))
        if reasoning.get("effort") in BUDGETS:
            return BUDGETS[reasoning["effort"]]
        if reasoning.get("enabled") is True:
            return BUDGETS["medium"]
    return BUDGETS.get(str(body.get("reasoning_effort")))


def apply(out: Body, body: Body) -> None:
    """A chat body's ``reasoning_effort`` (or OpenRouter-style ``reasoning``) -> ``thinking`` on the
    Messages body ``out``. The budget must stay below ``max_tokens`` (chat counts reasoning in its output
    allowance too): it shrinks to fit, and an allowance too small for the smallest budget grows by it."""
    budget = _budget(body)
    if budget is None:
        return
    max_tokens = int(out.get("max_tokens") or 0)
    if max_tokens <= MIN_BUDGET:
        out["max_tokens"], budget = max_tokens + MIN_BUDGET, MIN_BUDGET
    else:
        budget = min(budget, max_tokens - 1)
    out["thinking"] = {"type": "enabled", "budget_tokens": budget}
