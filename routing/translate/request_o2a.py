"""OpenAI Chat request -> Anthropic Messages request."""

from __future__ import annotations

from typing import Any

import orjson

from routing.translate import structured, thinking

Body = dict[str, Any]
_PASS = ("temperature", "top_p", "top_k")
DEFAULT_MAX_TOKENS = 4096


def _image_block(part: dict[str, Any]) -> dict[str, Any]:
    url = (part.get("image_url") or {}).get("url", "")
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": head, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _document_block(part: dict[str, Any]) -> dict[str, Any]:
    """A chat ``file`` part with inline data (refusal.py refuses the others) -> a document block."""
    file = part.get("file") or {}
    head, _, data = str(file.get("file_data") or "").removeprefix("data:").partition(";base64,")
    block: dict[str, Any] = {
        "type": "document",
        "source": {"type": "base64", "media_type": head or "application/pdf", "data": data},
    }
    if file.get("filename"):
        block["title"] = file["filename"]
    return block


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Content parts as Anthropic blocks. A part's ``cache_control`` (the breakpoint OpenRouter-style
    clients put on OpenAI parts) is kept: without it the provider caches nothing for this prompt."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            block: dict[str, Any] = {"type": "text", "text": part.get("text", "")}
        elif part.get("type") == "image_url":
            block = _image_block(part)
        elif part.get("type") == "file":
            block = _document_block(part)
        elif part.get("type") == "refusal":
            block = {"type": "text", "text": part.get("refusal", "")}
        else:
            continue
        if isinstance(part.get("cache_control"), dict):
            block["cache_control"] = part["cache_control"]
        blocks.append(block)
    return blocks


def _text(content: Any) -> str:
    return "\n".join(b["text"] for b in _blocks(content) if b["type"] == "text")


def _arguments(raw: Any) -> Any:
    if isinstance(raw, dict):
        return raw
    try:
        value = orjson.loads(raw or "{}")
    except orjson.JSONDecodeError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"value": value}


def _assistant(message: dict[str, Any]) -> dict[str, Any]:
    blocks = _blocks(message.get("content"))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", ""),
                "name": function.get("name", ""),
                "input": _arguments(function.get("arguments")),
            }
        )
    return {"role": "assistant", "content": blocks}


def _tool_result(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": message.get("tool_call_id", ""),
        "content": _text(message.get("content")),
    }


def _append(out: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Consecutive turns of one role merge (tool results then the user's text; two user messages)."""
    if out and out[-1]["role"] == role:
        prior = out[-1]["content"]
        out[-1]["content"] = (_blocks(prior) if isinstance(prior, str) else prior) + blocks
    else:
        out.append({"role": role, "content": blocks})


def split(messages: list[dict[str, Any]]) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    """(the text blocks of each system message, the other messages)."""
    system: list[list[dict[str, Any]]] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            system.append([b for b in _blocks(message.get("content")) if b["type"] == "text"])
        elif role == "assistant":
            out.append(_assistant(message))
        elif role == "tool":
            _append(out, "user", [_tool_result(message)])
        else:
            content = message.get("content")
            if isinstance(content, str) and not (out and out[-1]["role"] == "user"):
                out.append({"role": "user", "content": content})
            else:
                _append(out, "user", _blocks(content))
    return system, out


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function") or {}
    out = {"name": function.get("name", ""), "input_schema": function.get("parameters") or {"type": "object"}}
    if function.get("description"):
        out["description"] = function["description"]
    return out


def tool_choice(choice: Any) -> dict[str, Any]:
    if isinstance(choice, dict):
        return {"type": "tool", "name": (choice.get("function") or {}).get("name", "")}
    return {"type": {"required": "any", "none": "none"}.get(choice, "auto")}


def _tools(out: Body, body: Body) -> None:
    if not body.get("tools"):
        return
    out["tools"] = [_tool(t) for t in body["tools"] if isinstance(t, dict)]
    if "tool_choice" in body:
        out["tool_choice"] = tool_choice(body["tool_choice"])
    if body.get("parallel_tool_calls") is False:
        choice = out.get("tool_choice") or {"type": "auto"}
        if choice.get("type") != "none":
            out["tool_choice"] = {**choice, "disable_parallel_tool_use": True}


def request(
    body: Body, *, upstream_model: str, default_max_tokens: int = DEFAULT_MAX_TOKENS, thinks: bool = True
) -> Body:
    """``thinks``: the offering declares reasoning (no thinking budget is sent to one that does not)."""
    system, messages = split(body.get("messages") or [])
    out: Body = {"model": upstream_model, "messages": messages}
    out["max_tokens"] = body.get("max_completion_tokens") or body.get("max_tokens") or default_max_tokens
    if any("cache_control" in block for blocks in system for block in blocks):
        out["system"] = [block for blocks in system for block in blocks]  # each keeps its breakpoint
    elif system:
        out["system"] = "\n\n".join("\n".join(block["text"] for block in blocks) for blocks in system)
    for name in _PASS:
        if name in body:
            out[name] = body[name]
    stop = body.get("stop")
    if stop:
        out["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    _tools(out, body)
    if thinks:
        thinking.apply(out, body)
    structured.apply(out, body.get("response_format"))
    if body.get("user"):
        out["metadata"] = {"user_id": body["user"]}
    if body.get("stream") is True:
        out["stream"] = True
    return out
