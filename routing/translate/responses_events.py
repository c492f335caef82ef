"""Responses output items, the Response object and SSE event framing, shared by whole answers
and streams so both say the same thing."""

from __future__ import annotations

import time
from typing import Any

import orjson

from routing.http.errors import GatewayError
from routing.http.sse import frame
from routing.translate.responses_request import ResponsesShape
from routing.translate.responses_tools import CUSTOM_INPUT, ToolRef

Body = dict[str, Any]


def event(kind: str, sequence_number: int, **fields: Any) -> bytes:
    payload = {"type": kind, "sequence_number": sequence_number, **fields}
    return frame(orjson.dumps(payload), kind.encode())


def error_event(err: GatewayError, *, sequence_number: int) -> bytes:
    return event("error", sequence_number, code=err.code, message=err.message, param=err.param)


def error_object(err: GatewayError) -> Body:
    return {"code": err.code, "message": err.message, "type": "server_error" if err.status >= 500 else "error"}


def text_part(text: str) -> Body:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def message_item(item_id: str, text: str | None, status: str) -> Body:
    content = [] if text is None else [text_part(text)]
    return {"id": item_id, "type": "message", "status": status, "role": "assistant", "content": content}


def reasoning_item(item_id: str, text: str | None, status: str) -> Body:
    item: Body = {"id": item_id, "type": "reasoning", "summary": [], "status": status}
    if text is not None:
        item["content"] = [{"type": "reasoning_text", "text": text}]
    return item


def call_item(ref: ToolRef, item_id: str, call_id: str, arguments: str, status: str) -> Body:
    """A function call as the caller declared it: ``function_call``, or ``custom_tool_call`` with its text."""
    item: Body = {"id": item_id, "call_id": call_id, "name": ref.name, "status": status}
    if ref.namespace is not None and ref.namespace != "functions":
        item["namespace"] = ref.namespace
    if ref.kind == "custom":
        return {**item, "type": "custom_tool_call", "input": custom_input(arguments)}
    return {**item, "type": "function_call", "arguments": arguments}


def custom_input(arguments: str) -> str:
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return arguments
    if isinstance(value, dict) and isinstance(value.get(CUSTOM_INPUT), str):
        return str(value[CUSTOM_INPUT])
    return arguments


def envelope(
    response_id: str, model: str, shape: ResponsesShape, *, status: str, output: list[Body], usage: Body | None,
    created_at: float, error: Body | None = None, incomplete: str | None = None,
) -> Body:  # fmt: skip
    echo = shape.echo
    return {
        "id": response_id, "object": "response", "created_at": int(created_at), "status": status,
        "completed_at": int(time.time()) if status == "completed" else None, "model": model, "output": output,
        "usage": usage, "error": error, "access_programs": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": echo.get("instructions"), "tools": echo.get("tools") or [],
        "tool_choice": echo.get("tool_choice", "auto"), "parallel_tool_calls": echo.get("parallel_tool_calls", True),
        "temperature": echo.get("temperature"), "top_p": echo.get("top_p"),
        "max_output_tokens": echo.get("max_output_tokens"), "metadata": echo.get("metadata") or {},
        "previous_response_id": None, "reasoning": echo.get("reasoning"), "text": echo.get("text") or {"format": {"type": "text"}},
        "prompt_cache_key": echo.get("prompt_cache_key"),
        "service_tier": echo.get("service_tier"), "store": False, "truncation": echo.get("truncation", "disabled"),
    } | ({"user": echo["user"]} if isinstance(echo.get("user"), str) else {})  # fmt: skip
