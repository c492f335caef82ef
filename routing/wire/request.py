"""What routing needs to know about a request, read once from the parsed body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contracts.tokens import MESSAGE_OVERHEAD_TOKENS, TooDeeplyNested, count_value_tokens
from routing.http.errors import invalid_request

Body = dict[str, Any]


@dataclass(slots=True)
class RequestView:
    dialect: str  # the caller's wire format: "openai" | "anthropic" | "responses"
    model: str
    stream: bool
    max_tokens: int | None
    input_estimate: int
    needs: frozenset[str]  # parameters the request uses: "tools", "json_mode", "vision"
    provider_prefs: dict[str, Any]
    wants_stream_usage: bool  # OpenAI: stream_options.include_usage was asked by the client
    forward: Body | None = None  # the body to forward when the caller's format is translated up front
    cache_key: str | None = None  # the caller's own conversation key (Responses ``prompt_cache_key``)


def estimate_input_tokens(messages: Any, *extra: Any) -> int:
    try:
        count = count_value_tokens(messages) + sum(count_value_tokens(item) for item in extra if item)
    except TooDeeplyNested as exc:
        raise invalid_request(f"Request JSON is nested too deeply: {exc}.") from exc
    return count + message_overhead(messages)


def message_overhead(messages: Any) -> int:
    """The framing tokens of the messages (role markers), as chat templates add them."""
    return MESSAGE_OVERHEAD_TOKENS * len(messages) if type(messages) is list else 0


def has_image(messages: Any) -> bool:
    if not isinstance(messages, list):
        return False
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") in ("image", "image_url"):
                    return True
    return False


def positive_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
