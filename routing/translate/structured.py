"""Structured output on the Messages API, emulated: ``response_format`` becomes one forced tool.

The tool's ``input_schema`` is the caller's JSON schema (any object for ``json_object``); the model
must call it, and the answer's translation (translate/response.py, translate/stream_anthropic.py)
turns that call back into the message content, so the caller reads JSON text as from OpenAI.
"""

from __future__ import annotations

from typing import Any

Body = dict[str, Any]
TOOL_NAME = "tokenway_structured_answer"  # reserved: a caller's tool of this name is not expected
_DESCRIPTION = "Give the final answer by calling this tool; its input is the answer."


def tool_for(response_format: Any) -> Body | None:
    """The synthetic tool for a chat ``response_format``; None for plain text."""
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_object":
        return {"name": TOOL_NAME, "description": _DESCRIPTION, "input_schema": {"type": "object"}}
    if response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema") or {}
    schema = spec.get("schema") if isinstance(spec, dict) else None
    description = spec.get("description") if isinstance(spec, dict) else None
    return {
        "name": TOOL_NAME,
        "description": f"{_DESCRIPTION} {description}" if isinstance(description, str) else _DESCRIPTION,
        "input_schema": schema if isinstance(schema, dict) and schema else {"type": "object"},
    }


def apply(out: Body, response_format: Any) -> None:
    """Add the forced tool to a Messages body. With the caller's own tools, any tool may be called;
    with thinking on, the Messages API allows only ``auto`` (the description then asks for the tool)."""
    tool = tool_for(response_format)
    if tool is None:
        return
    own = out.get("tools") or []
    out["tools"] = [*own, tool]
    if (out.get("thinking") or {}).get("type") == "enabled":
        out["tool_choice"] = {"type": "auto"}
    elif own:
        out["tool_choice"] = {"type": "any"}
    else:
        out["tool_choice"] = {"type": "tool", "name": TOOL_NAME}


def is_answer(name: Any) -> bool:
    return bool(name == TOOL_NAME)
