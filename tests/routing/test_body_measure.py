"""One walk of a request body measures and checks it: the input estimate's tokens from the fields the
estimate reads, and the nesting refusal for every field, whatever its place."""

from __future__ import annotations

from typing import Any

import pytest

from contracts.tokens import MAX_NESTING, MESSAGE_OVERHEAD_TOKENS, count_value_tokens
from routing.http.errors import GatewayError
from routing.wire import anthropic, checks, openai


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def test_the_estimate_counts_the_estimated_fields_once() -> None:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    messages = [{"role": "system", "content": "Rules " * 200}, {"role": "user", "content": "Which rule?"}]
    body = {"model": "m", "messages": messages, "tools": tools, "metadata": {"note": "not counted " * 50}}
    expected = count_value_tokens(messages) + count_value_tokens(tools) + MESSAGE_OVERHEAD_TOKENS * 2
    assert openai.view(body).input_estimate == expected
    system = [{"type": "text", "text": "You review code. " * 100}]
    claude = {"model": "m", "max_tokens": 64, "system": system, "messages": messages[1:], "tools": []}
    expected = count_value_tokens(system) + count_value_tokens(messages[1:]) + MESSAGE_OVERHEAD_TOKENS
    assert anthropic.view(claude).input_estimate == expected


@pytest.mark.parametrize("field", ["messages", "tools", "metadata", "response_format"])
def test_a_field_nested_too_deeply_is_refused_wherever_it_is(field: str) -> None:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    body[field] = _deep(MAX_NESTING + 1)
    with pytest.raises(GatewayError) as refused:
        openai.view(body)
    assert refused.value.status == 400 and "nested too deeply" in refused.value.message


def test_the_deepest_accepted_value_is_as_deep_as_before() -> None:
    # A top-level field sits one level below the body; the estimated fields keep the estimate's depth.
    assert checks.measure({"metadata": _deep(MAX_NESTING - 1)}, ()) == 0
    with pytest.raises(GatewayError):
        checks.measure({"metadata": _deep(MAX_NESTING)}, ())
    assert checks.measure({"messages": _deep(MAX_NESTING)}, ("messages",)) == 1
    with pytest.raises(GatewayError):
        checks.measure({"messages": _deep(MAX_NESTING + 1)}, ("messages",))
