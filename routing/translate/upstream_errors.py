"""A provider's own error body, read in either dialect: the human message and the field it names."""

from __future__ import annotations

from typing import Any

import orjson


def provider_error(body: bytes) -> tuple[str, str | None] | None:
    """(message, param) from ``{"error": {"message", "param"}}`` (OpenAI) or ``{"type": "error",
    "error": {"type", "message"}}`` (Anthropic); None when the body is not such JSON."""
    try:
        data: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, str) and error:
        return error, None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return None
    param = error.get("param")
    return error["message"], param if isinstance(param, str) else None
