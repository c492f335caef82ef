"""Stop reasons: Anthropic stop_reason ⇄ OpenAI finish_reason."""

from __future__ import annotations

_TO_OPENAI = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
_TO_ANTHROPIC = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}


def to_openai(stop_reason: str | None) -> str | None:
    return None if stop_reason is None else _TO_OPENAI.get(stop_reason, "stop")


def to_anthropic(finish_reason: str | None) -> str | None:
    return None if finish_reason is None else _TO_ANTHROPIC.get(finish_reason, "end_turn")
