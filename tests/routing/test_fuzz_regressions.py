"""Inputs the chaos suite's fuzzer (tests/reliability/test_fuzz.py) answered with a 500, now a precise 400."""

from __future__ import annotations

import pytest
import requests

CASES = [
    ("/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": [{"role": {}, "content": ""}], "max_tokens": 1}),
    ("/v1/messages/count_tokens", {"model": "claude-haiku-4.5", "messages": [{"role": {}, "content": []}]}),
    ("/v1/messages", {"model": "claude-haiku-4.5", "max_tokens": 1, "messages": [{"role": ["user"], "content": "x"}]}),
]


@pytest.mark.parametrize(("path", "body"), CASES)
def test_a_role_that_is_not_a_string_is_a_400_naming_the_field(gateway, tenant, path, body):
    r = requests.post(gateway.base_url + path, json=body, headers={"x-api-key": tenant.key}, timeout=10)
    assert r.status_code == 400, r.text
    assert "messages[0].role" in r.json()["error"]["message"]


@pytest.mark.parametrize("content", [1.5, 7, {"text": "hi"}, True])
def test_a_responses_message_whose_content_is_neither_text_nor_parts_is_a_4xx(gateway, tenant, content):
    body = {"model": "gpt-4.1-mini", "input": [{"role": "user", "content": content}], "max_output_tokens": 16}
    r = requests.post(gateway.base_url + "/v1/responses", json=body, headers={"x-api-key": tenant.key}, timeout=10)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == "input[0].content"


def _deep(levels: int) -> object:
    value: object = "x"
    for index in range(levels):
        value = [value] if index % 2 else {"a": value}
    return value


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}], "n": _deep(300)}),
        ("/v1/messages", {"model": "claude-haiku-4.5", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
                          "metadata": _deep(300)}),
        ("/v1/responses", {"model": "gpt-4.1-mini", "input": "hi", "max_output_tokens": _deep(300)}),
        ("/v1/responses", {"model": "gpt-4.1-mini", "input": [{"type": "function_call_output", "call_id": "c",
                                                               "output": _deep(300)}]}),
    ],
)  # fmt: skip
def test_a_deep_value_in_a_field_only_forwarded_is_a_400_before_anything_is_held(gateway, tenant, path, body):
    r = requests.post(gateway.base_url + path, json=body, headers={"x-api-key": tenant.key}, timeout=10)
    assert r.status_code == 400, r.text
    assert "nested too deeply" in r.json()["error"]["message"]
    assert tenant.avail() == 10**9  # nothing was held


@pytest.mark.parametrize("tools", [True, 1e-05, 3, "x", {"type": "function"}])
def test_responses_tools_that_are_not_an_array_are_a_400(gateway, tenant, tools):
    body = {"model": "gpt-4.1-mini", "input": "hi", "max_output_tokens": 16, "tools": tools}
    r = requests.post(gateway.base_url + "/v1/responses", json=body, headers={"x-api-key": tenant.key}, timeout=10)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == "tools"


@pytest.mark.parametrize(
    ("path", "field", "value"),
    [
        ("/v1/chat/completions", "stop", 0.5),
        ("/v1/chat/completions", "stop", [1, 2]),
        ("/v1/messages", "stop_sequences", "END"),
        ("/v1/messages", "stop_sequences", [None]),
    ],
)
def test_stop_sequences_of_the_wrong_type_are_a_400_before_translation(gateway, tenant, path, field, value):
    body = {"model": "claude-haiku-4.5", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], field: value}
    r = requests.post(gateway.base_url + path, json=body, headers={"x-api-key": tenant.key}, timeout=10)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["message"].startswith(f"'{field}")  # the field, or the item in it that is wrong
