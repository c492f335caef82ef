"""Responses request -> chat-completions request, plus what the answer needs to map back.

The chat body then takes the gateway's OpenAI path: forwarded as it is to OpenAI-dialect
offerings, translated again for Anthropic-dialect ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from routing.translate import responses_input
from routing.translate.responses_tools import ToolMap, tool_choice

Body = dict[str, Any]
_PASS = ("temperature", "top_p", "user")
# Request fields the Response object echoes back to the caller.
_ECHO = (
    "instructions", "tools", "tool_choice", "parallel_tool_calls", "temperature", "top_p", "max_output_tokens",
    "metadata", "text", "reasoning", "prompt_cache_key", "user", "service_tier", "store", "truncation",
)  # fmt: skip


@dataclass(slots=True)
class ResponsesShape:
    """What the caller asked, for the answer: tool names to map back, fields to echo."""

    tools: ToolMap = field(default_factory=ToolMap)
    echo: Body = field(default_factory=dict)


def to_chat(body: Body) -> tuple[Body, ResponsesShape]:
    shape = ResponsesShape(echo={k: body[k] for k in _ECHO if k in body})
    if isinstance(body.get("tools"), list):
        shape.echo["tools"] = [_echoed_tool(tool) for tool in body["tools"]]
    for tool in body.get("tools") or ():
        shape.tools.add(tool)
    items = body.get("input")
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            tools = item.get("tools")
            for tool in tools if isinstance(tools, list) else ():
                shape.tools.add(tool)
    chat: Body = {"model": body.get("model"), "messages": _messages(body, shape.tools)}
    _options(chat, body, shape.tools)
    return chat, shape


def _echoed_tool(tool: Any) -> Any:
    """A function tool as the Response object shows it: ``parameters`` and ``strict`` are always there
    (the API reference requires both, ``null`` allowed), ``null`` when the caller did not say."""
    if isinstance(tool, dict) and tool.get("type") == "function":
        return {"parameters": None, "strict": None, **tool}
    return tool


def _messages(body: Body, tools: ToolMap) -> list[Body]:
    instructions = body.get("instructions")
    head = [{"role": "system", "content": instructions}] if isinstance(instructions, str) and instructions else []
    return head + responses_input.messages(body.get("input"), tools)


def _options(chat: Body, body: Body, tools: ToolMap) -> None:
    if tools.functions:
        chat["tools"] = tools.functions
        if "tool_choice" in body:
            chat["tool_choice"] = tool_choice(body["tool_choice"], tools)
        if isinstance(body.get("parallel_tool_calls"), bool):
            chat["parallel_tool_calls"] = body["parallel_tool_calls"]
    if isinstance(body.get("max_output_tokens"), int):
        chat["max_tokens"] = body["max_output_tokens"]
    for name in _PASS:
        if body.get(name) is not None:
            chat[name] = body[name]
    text = body.get("text")
    response_format = _response_format(text.get("format") if isinstance(text, dict) else None)
    if response_format:
        chat["response_format"] = response_format
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str):
        chat["reasoning_effort"] = reasoning["effort"]
    if body.get("stream") is True:
        chat["stream"] = True


def _response_format(fmt: Any) -> Body | None:
    """``text.format`` -> ``response_format``: a JSON schema or JSON mode; plain text needs none."""
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    if fmt.get("type") != "json_schema":
        return None
    schema = {"name": fmt.get("name") or "response", "schema": fmt.get("schema") or {}}
    if isinstance(fmt.get("strict"), bool):
        schema["strict"] = fmt["strict"]
    return {"type": "json_schema", "json_schema": schema}
