"""Responses ``input`` items -> chat-completions messages.

Each item maps on its own, so a conversation that only appends items (what agents send turn
after turn) gives messages that only append too: the forwarded prompt keeps its prefix and the
provider's prompt cache. Items with no chat equivalent (reasoning, configuration updates,
references, unknown types) are dropped, never refused.
"""

from __future__ import annotations

from typing import Any

import orjson

from routing.translate.responses_tools import CUSTOM_INPUT, ToolMap

Body = dict[str, Any]
_TEXT_PARTS = ("input_text", "output_text", "text", "summary_text", "refusal")
_ROLES = {"developer": "system", "system": "system", "user": "user", "assistant": "assistant"}


def messages(items: Any, tools: ToolMap) -> list[Body]:
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    out: list[Body] = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict):
            _item(out, item, tools)
    return out


def _item(out: list[Body], item: Body, tools: ToolMap) -> None:
    kind = item.get("type") or ("message" if "role" in item else None)
    if kind == "message":
        _message(out, item)
    elif kind == "function_call":
        _call(out, item, str(item.get("arguments") or "{}"), tools)
    elif kind == "custom_tool_call":
        arguments = orjson.dumps({CUSTOM_INPUT: str(item.get("input") or "")}).decode()
        _call(out, item, arguments, tools)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        out.append({"role": "tool", "tool_call_id": str(item.get("call_id", "")), "content": text(item.get("output"))})


def _message(out: list[Body], item: Body) -> None:
    role = _ROLES.get(str(item.get("role")), "user")
    content = item.get("content")
    if role != "user" or isinstance(content, str):
        out.append({"role": role, "content": text(content)})
        return
    parts = [p for p in (_part(part) for part in (content if isinstance(content, list) else ())) if p is not None]
    if len(parts) == 1 and parts[0]["type"] == "text":
        out.append({"role": role, "content": parts[0]["text"]})
    else:
        out.append({"role": role, "content": parts})


def _part(part: Any) -> Body | None:
    if not isinstance(part, dict):
        return None
    if part.get("type") in _TEXT_PARTS:
        return {"type": "text", "text": str(part.get("text") or part.get("refusal") or "")}
    if part.get("type") == "input_image" and isinstance(part.get("image_url"), str):
        image: Body = {"url": part["image_url"]}
        if part.get("detail") in ("low", "high", "auto"):
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    if part.get("type") == "input_file":
        return _file_part(part)
    return None


def _file_part(part: Body) -> Body:
    """``input_file`` -> a chat ``file`` part (inline data or a file id, as sent)."""
    file = {k: part[k] for k in ("file_data", "file_id", "filename") if isinstance(part.get(k), str)}
    return {"type": "file", "file": file}


def _call(out: list[Body], item: Body, arguments: str, tools: ToolMap) -> None:
    """Consecutive calls join the assistant message before them, as chat-completions expects."""
    call = {
        "id": str(item.get("call_id") or item.get("id") or ""),
        "type": "function",
        "function": {"name": tools.chat_name(str(item.get("name", ""))), "arguments": arguments},
    }
    last = out[-1] if out else None
    if last is not None and last["role"] == "assistant":
        last.setdefault("tool_calls", []).append(call)
    else:
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})


def text(content: Any) -> str:
    """A string as it is; content parts as their text, joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else orjson.dumps(content).decode()
    parts = [p.get("text") or p.get("refusal") or "" for p in content if isinstance(p, dict)]
    return "\n".join(str(p) for p in parts if p)
