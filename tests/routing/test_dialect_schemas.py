"""Each caller dialect checks the same kinds of things (types, ranges, enums, required names) against its
declared schema (routing/wire/schemas/): a bad field is a 400 in the caller's shape naming it, with
nothing held and nothing forwarded; what official SDKs and agents send still passes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.routing.conftest import sim_requests

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HI = [{"role": "user", "content": "hi"}]
CHAT = {"model": "gpt-4.1-mini", "messages": HI, "max_tokens": 8}
MESSAGES = {"model": "claude-haiku-4.5", "max_tokens": 8, "messages": HI}
COUNT = {"model": "claude-haiku-4.5", "messages": HI}
RESPONSES = {"model": "gpt-4.1-mini", "input": "hi", "max_output_tokens": 16}
FN = {"name": "f", "parameters": {"type": "object", "properties": {}}}

# (path, body, the field named). The Responses rows are those the gateway answered 500 or 200 before.
CASES = [
    ("/v1/responses", {**RESPONSES, "tools": [{"type": "namespace", "name": "ns", "tools": 5}]}, "tools[0].tools"),
    ("/v1/responses", {**RESPONSES, "stream": "yes"}, "stream"),
    ("/v1/responses", {**RESPONSES, "max_output_tokens": "10"}, "max_output_tokens"),
    ("/v1/responses", {**RESPONSES, "max_output_tokens": 1e30}, "max_output_tokens"),
    ("/v1/responses", {**RESPONSES, "instructions": 5}, "instructions"),
    ("/v1/responses", {**RESPONSES, "tools": [5]}, "tools[0]"),
    ("/v1/responses", {**RESPONSES, "tools": [{"type": "function", "parameters": {}}]}, "tools[0].name"),
    ("/v1/responses", {**RESPONSES, "input": [{"role": "wizard", "content": "x"}]}, "input[0].role"),
    ("/v1/responses", {**RESPONSES, "temperature": 3}, "temperature"),
    ("/v1/responses", {**RESPONSES, "tool_choice": 5}, "tool_choice"),
    ("/v1/responses", {**RESPONSES, "input": [{"type": "function_call_output", "output": "x"}]}, "input[0].call_id"),
    ("/v1/responses", {**RESPONSES, "input": [{"type": "additional_tools", "tools": 5}]}, "input[0].tools"),
    ("/v1/responses", {**RESPONSES, "text": {"format": {"type": "json_schema", "schema": 5}}}, "text.format.schema"),
    ("/v1/responses", {**RESPONSES, "model": " "}, "model"),
    (
        "/v1/chat/completions",
        {**CHAT, "tools": [{"type": "function", "function": {**FN, "parameters": 5}}]},
        "tools[0].function.parameters",
    ),
    ("/v1/chat/completions", {**CHAT, "stream": "yes"}, "stream"),
    ("/v1/chat/completions", {**CHAT, "max_tokens": "10"}, "max_tokens"),
    ("/v1/chat/completions", {**CHAT, "max_completion_tokens": 1e30}, "max_completion_tokens"),
    ("/v1/chat/completions", {**CHAT, "messages": [{"role": "system", "content": 5}, *HI]}, "messages[0].content"),
    ("/v1/chat/completions", {**CHAT, "tools": [5]}, "tools[0]"),
    (
        "/v1/chat/completions",
        {**CHAT, "tools": [{"type": "function", "function": {"parameters": {}}}]},
        "tools[0].function.name",
    ),
    ("/v1/chat/completions", {**CHAT, "messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
    ("/v1/chat/completions", {**CHAT, "tool_choice": "sometimes"}, "tool_choice"),
    (
        "/v1/chat/completions",
        {**CHAT, "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "x"}]}]},
        "messages[0].content[0].image_url",
    ),
    ("/v1/chat/completions", {**CHAT, "messages": [*HI, {"role": "tool", "content": "x"}]}, "messages[1].tool_call_id"),
    ("/v1/chat/completions", {**CHAT, "messages": [{"role": "user"}]}, "messages[0].content"),
    ("/v1/chat/completions", {**CHAT, "provider": {"sort": "cheapest"}}, "provider.sort"),
    ("/v1/messages", {**MESSAGES, "tools": [{"name": "t", "input_schema": 5}]}, "tools[0].input_schema"),
    ("/v1/messages", {**MESSAGES, "stream": "yes"}, "stream"),
    ("/v1/messages", {**MESSAGES, "max_tokens": "10"}, "max_tokens"),
    ("/v1/messages", {**MESSAGES, "max_tokens": 1e30}, "max_tokens"),
    ("/v1/messages", {**MESSAGES, "system": 5}, "system"),
    ("/v1/messages", {**MESSAGES, "tools": [5]}, "tools[0]"),
    ("/v1/messages", {**MESSAGES, "tools": [{"input_schema": {"type": "object"}}]}, "tools[0].name"),
    ("/v1/messages", {**MESSAGES, "messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
    ("/v1/messages", {**MESSAGES, "tool_choice": {"type": "sometimes"}}, "tool_choice.type"),
    (
        "/v1/messages",
        {**MESSAGES, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]}]},
        "messages[0].content[0].name",
    ),
    ("/v1/messages", {**MESSAGES, "metadata": [1]}, "metadata"),
    ("/v1/messages", {**MESSAGES, "top_k": -1}, "top_k"),
    ("/v1/messages", {"model": "claude-haiku-4.5", "messages": HI}, "max_tokens"),
    ("/v1/messages/count_tokens", {**COUNT, "messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
    ("/v1/messages/count_tokens", {**COUNT, "tools": [5]}, "tools[0]"),
    ("/v1/messages/count_tokens", {**COUNT, "system": [{"type": "text"}]}, "system[0].text"),
]


def _post(gateway, tenant, path: str, body: Any) -> requests.Response:
    headers = {"x-api-key": tenant.key, "content-type": "application/json"}
    return requests.post(f"{gateway.base_url}{path}", data=json.dumps(body), headers=headers, timeout=20)


@pytest.mark.parametrize(("path", "body", "param"), CASES)
def test_a_bad_field_is_a_400_in_the_callers_shape_naming_it(gateway, tenant, sim, path, body, param):
    before = tenant.avail()
    response = _post(gateway, tenant, path, body)
    assert response.status_code == 400, response.text[:500]
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-request-id"].startswith("gen-")
    payload = response.json()
    error = payload["error"]
    assert error["type"] == "invalid_request_error" and error["code"] == "invalid_request"
    assert error["message"].startswith(f"'{param}' "), error["message"]
    if path.startswith("/v1/messages"):  # Anthropic's shape: the message names the field
        assert payload["type"] == "error"
    else:
        assert error["param"] == param
    assert tenant.avail() == before  # nothing held
    assert sim_requests(sim, "openai", 5) == [] and sim_requests(sim, "anthropic", 5) == []  # nothing forwarded


def test_unknown_fields_and_kinds_pass_through_to_the_provider(gateway, tenant, sim):
    body = {
        **CHAT,
        "x_vendor_flag": {"a": [1]},
        "logit_bias": {"50256": -100},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "input_audio", "x": 1}], "x_note": 1}
        ],
    }
    response = _post(gateway, tenant, "/v1/chat/completions", body)
    assert response.status_code == 200, response.text[:500]
    received = sim_requests(sim, "openai", 1)[0]["json"]
    assert received["x_vendor_flag"] == {"a": [1]} and received["messages"][0]["x_note"] == 1


def test_official_sdk_shapes_pass(oai, claude):
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
    history = [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO", "detail": "low"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "4 C"},
    ]
    for model in ("gpt-4.1-mini", "claude-haiku-4.5"):  # native and translated
        oai.chat.completions.create(
            model=model,
            messages=history,
            tools=[tool],
            tool_choice="auto",
            max_tokens=8,
            temperature=0.2,
            stop=["END"],
            user="u1",
        )
        stream = oai.chat.completions.create(
            model=model,
            messages=history[:2],
            max_completion_tokens=8,
            stream=True,
            stream_options={"include_usage": True},
        )
        assert list(stream)
        oai.responses.create(
            model=model,
            instructions="Be brief.",
            max_output_tokens=16,
            tools=[{"type": "function", **tool["function"]}],
            input=[
                {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
                {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
                {"type": "function_call_output", "call_id": "call_1", "output": "4 C"},
            ],
            text={"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}},
        )
        claude.messages.create(
            model=model,
            max_tokens=8,
            metadata={"user_id": "u1"},
            stop_sequences=["END"],
            system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            tools=[{"name": "get_weather", "description": "Weather.", "input_schema": tool["function"]["parameters"]}],
            tool_choice={"type": "auto"},
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Weather?"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                    ],
                },
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "tu_1", "name": "get_weather", "input": {"city": "Oslo"}}],
                },
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "4 C"}]},
            ],
        )
    assert claude.messages.count_tokens(model="claude-haiku-4.5", messages=HI, system="Be brief.").input_tokens > 0


@pytest.mark.parametrize("name", sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.glob("*/*.json")))
def test_agent_session_fixtures_pass(gateway, tenant, name):
    """Claude-Code- and Codex-shaped bodies (tests/fixtures), with a catalog model and a small output."""
    body = json.loads((FIXTURES / name).read_text())
    if "input" in body:
        body.update(model="gpt-4.1-mini", max_output_tokens=16, stream=False)
        response = _post(gateway, tenant, "/v1/responses", body)
    else:
        body.update(model="claude-haiku-4.5", max_tokens=16, stream=False)
        response = _post(gateway, tenant, "/v1/messages", body)
    assert response.status_code == 200, response.text[:500]
