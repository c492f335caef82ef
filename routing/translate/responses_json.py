"""A whole chat-completions answer -> a Response object."""

from __future__ import annotations

import time
from typing import Any

from routing.translate import responses_events as ev
from routing.translate.responses_request import ResponsesShape

Body = dict[str, Any]


def output_items(completion: Body, shape: ResponsesShape, response_id: str) -> list[Body]:
    choice = (completion.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    items: list[Body] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        items.append(ev.reasoning_item(f"rs_{response_id}_0", reasoning, "completed"))
    content = message.get("content")
    if isinstance(content, str) and content:
        items.append(ev.message_item(f"msg_{response_id}_{len(items)}", content, "completed"))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        ref = shape.tools.ref(str(function.get("name", "")))
        call_id = str(call.get("id") or f"call_{response_id}_{len(items)}")
        arguments = str(function.get("arguments") or "")
        items.append(ev.call_item(ref, f"fc_{response_id}_{len(items)}", call_id, arguments, "completed"))
    return items


def response(completion: Body, shape: ResponsesShape, *, response_id: str, model: str, usage: Body) -> Body:
    finish = ((completion.get("choices") or [{}])[0]).get("finish_reason")
    truncated = finish == "length"
    return ev.envelope(
        response_id, model, shape, status="incomplete" if truncated else "completed",
        output=output_items(completion, shape, response_id), usage=usage, created_at=time.time(),
        incomplete="max_output_tokens" if truncated else None,
    )  # fmt: skip
