"""Anthropic Messages request -> OpenAI Chat request."""

from __future__ import annotations

from typing import Any

import orjson

from routing.translate import thinking

Body = dict[str, Any]
_PASS = ("temperature", "top_p")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _image_part(block: dict[str, Any]) -> dict[str, Any]:
    source = block.get("source") or {}
    if source.get("type") == "url":
        return {"type": "image_url", "image_url": {"url": source.get("url", "")}}
    url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    return {"type": "image_url", "image_url": {"url": url}}


def _document_part(block: dict[str, Any]) -> dict[str, Any]:
    """A document block sent inline (refusal.py refuses the others): text as a text part, data as a file part."""
    source = block.get("source") or {}
    if source.get("type") == "text":
        return {"type": "text", "text": str(source.get("data") or "")}
    media_type = source.get("media_type") or "application/pdf"
    file = {"file_data": f"data:{media_type};base64,{source.get('data', '')}"}
    file["filename"] = str(block.get("title") or "document.pdf")
    return {"type": "file", "file": file}


def _user_parts(blocks: list[Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif block.get("type") == "image":
            parts.append(_image_part(block))
        elif block.get("type") == "document":
            parts.append(_document_part(block))
    return parts


def _user_messages(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        return [{"role": "user", "content": content}]
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": b.get("tool_use_id", ""), "content": _text_of(b.get("content"))}
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    parts = _user_parts(content)
    if len(parts) == 1 and parts[0]["type"] == "text":
        out.append({"role": "user", "content": parts[0]["text"]})
    elif parts:
        out.append({"role": "user", "content": parts})
    return out


def _assistant_message(content: Any) -> dict[str, Any]:
    if not isinstance(content, list):
        return {"role": "assistant", "content": content}
    message: dict[str, Any] = {"role": "assistant", "content": _text_of(content) or None}
    calls = [
        {
            "id": b.get("id", ""),
            "type": "function",
            "function": {"name": b.get("name", ""), "arguments": orjson.dumps(b.get("input") or {}).decode()},
        }
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    if calls:
        message["tool_calls"] = calls
    return message


def messages(body: Body) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system = _text_of(body.get("system"))
    if system:
        out.append({"role": "system", "content": system})
    for message in body.get("messages") or []:
        role = message.get("role")
        if role == "assistant":
            out.append(_assistant_message(message.get("content")))
        elif role == "system":
            out.append({"role": "system", "content": _text_of(message.get("content"))})
        else:
            out.extend(_user_messages(message.get("content")))
    return out


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = {"name": tool.get("name", ""), "parameters": tool.get("input_schema") or {"type": "object"}}
    if tool.get("description"):
        function["description"] = tool["description"]
    return {"type": "function", "function": function}


def tool_choice(choice: Any) -> Any:
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name", "")}}
    return {"auto": "auto", "any": "required", "none": "none"}.get(kind or "", "auto")


def _tools(out: Body, body: Body) -> None:
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict) and "input_schema" in t]
    if not tools:
        return
    out["tools"] = [_tool(t) for t in tools]
    choice = body.get("tool_choice")
    if choice is not None:
        out["tool_choice"] = tool_choice(choice)
    if isinstance(choice, dict) and choice.get("disable_parallel_tool_use") is True:
        out["parallel_tool_calls"] = False


def _response_format(body: Body) -> Body | None:
    """Structured outputs (``output_format``, or ``output_config.format``) -> ``response_format``."""
    config = body.get("output_config")
    fmt = body.get("output_format") or (config.get("format") if isinstance(config, dict) else None)
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    return {"type": "json_schema", "json_schema": {"name": "response", "schema": fmt.get("schema") or {}}}


def request(body: Body, *, upstream_model: str, thinks: bool = True) -> Body:
    """``thinks``: the offering declares reasoning; a model that cannot think is not sent an effort
    (the OpenAI API refuses ``reasoning_effort`` for such models), and answers without thinking."""
    out: Body = {"model": upstream_model, "messages": messages(body)}
    for name in _PASS:
        if name in body:
            out[name] = body[name]
    if body.get("max_tokens"):
        out["max_tokens"] = body["max_tokens"]
    if body.get("stop_sequences"):
        out["stop"] = body["stop_sequences"]
    _tools(out, body)
    effort = thinking.effort_for(body.get("thinking")) if thinks else None
    if effort is not None:
        out["reasoning_effort"] = effort
    response_format = _response_format(body)
    if response_format is not None:
        out["response_format"] = response_format
    user = (body.get("metadata") or {}).get("user_id")
    if user:
        out["user"] = user
    if body.get("stream") is True:
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out
