"""Hypothesis strategies for the gateway's own requests: a valid body per endpoint with one to three
of the fields the gateway reads replaced by arbitrary JSON (deep nesting included) or removed."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

BASES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": {
        "model": "deepseek-v3.2",
        "messages": [{"role": "user", "content": "Say hi."}],
        "max_tokens": 8,
    },
    "/v1/messages": {"model": "claude-haiku-4.5", "max_tokens": 8, "messages": [{"role": "user", "content": "Hi."}]},
    "/v1/messages/count_tokens": {"model": "claude-haiku-4.5", "messages": [{"role": "user", "content": "Hi."}]},
    "/v1/responses": {
        "model": "gpt-4.1-mini",
        "input": [{"role": "user", "content": "Say hi."}],
        "max_output_tokens": 16,
    },
}
# What the gateway reads (routing/wire/*): top-level fields, and inside the first message or input item.
FIELDS = (
    "model", "messages", "max_tokens", "max_completion_tokens", "max_output_tokens", "stream", "stream_options",
    "temperature", "top_p", "tools", "tool_choice", "response_format", "system", "input", "instructions",
    "provider", "prompt_cache_key", "metadata", "thinking", "reasoning", "previous_response_id", "n", "stop",
    "stop_sequences", "top_k", "user", "text", "parallel_tool_calls", "store",
    "0.role", "0.content", "0.content.0", "0.tool_calls", "0.type",
)  # fmt: skip
REMOVE = object()

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=16)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=20,
)
DEEP = st.integers(min_value=60, max_value=1_000).map(lambda depth: _nested(depth))
VALUES = st.one_of(st.just(REMOVE), SCALARS, JSON, DEEP)
MUTATIONS = st.lists(st.tuples(st.sampled_from(FIELDS), VALUES), min_size=1, max_size=3)


def _nested(depth: int) -> Any:
    value: Any = "x"
    for index in range(depth):
        value = [value] if index % 2 else {"a": value}
    return value


def mutated(path: str, mutations: list[tuple[str, Any]]) -> dict[str, Any]:
    body = copy.deepcopy(BASES[path])
    for field, value in mutations:
        parent, key = _locate(body, field)
        if parent is None:
            continue
        if value is REMOVE:
            if isinstance(parent, dict):
                parent.pop(key, None)
        elif isinstance(parent, dict):
            parent[key] = value
        elif isinstance(parent, list) and parent:
            parent[0] = value
    return body


def _locate(body: dict[str, Any], field: str) -> tuple[Any, Any]:
    """(container, key) for a top-level name, or a dotted path into the first message / input item."""
    if not field[0].isdigit():
        return body, field
    items = body.get("messages", body.get("input"))
    node: Any = items
    *steps, last = field.split(".")
    for step in steps:
        node = (
            node[int(step)]
            if step.isdigit() and isinstance(node, list) and node
            else (node.get(step) if isinstance(node, dict) else None)
        )
        if node is None:
            return None, None
    if isinstance(node, dict):
        return node, last
    if isinstance(node, list) and last.isdigit():
        return node, int(last)
    return None, None
