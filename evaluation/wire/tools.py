"""The one function tool the capability probe offers (both dialects)."""

from __future__ import annotations

from typing import Any

TOOL_NAME = "get_weather"
TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
