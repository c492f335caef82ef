from __future__ import annotations

import anthropic
import pytest

from tests.sim.conftest import sse_events

MODEL = "claude-haiku-4-5-20251001"
HI = [{"role": "user", "content": "Say something"}]
TOOL = {
    "name": "lookup",
    "description": "Look a thing up",
    "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
}


def test_non_streaming_message_and_usage(claude):
    with claude() as client:
        message = client.messages.create(model=MODEL, max_tokens=300, messages=HI)
    assert message.type == "message" and message.role == "assistant"
    assert message.stop_reason == "end_turn"
    assert message.content[0].type == "text" and message.content[0].text
    assert message.usage.input_tokens > 0
    assert message.usage.cache_read_input_tokens == 0
    assert message.usage.cache_creation.ephemeral_5m_input_tokens == 0


def test_stream_event_sequence_is_anthropics(http):
    body = {"model": MODEL, "max_tokens": 300, "messages": HI, "stream": True}
    response = http.post("/anthropic/v1/messages?beta=true", json=body)
    events = sse_events(response.text)
    assert events[:3] == ["message_start", "content_block_start", "ping"]
    assert events[3] == "content_block_delta"
    assert events[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert response.headers["request-id"].startswith("req_")
    assert response.headers["anthropic-ratelimit-requests-limit"] == "4000"


def test_sdk_stream_accumulates_tool_use_and_thinking(claude):
    with (
        claude() as client,
        client.messages.stream(
            model=MODEL, max_tokens=4000, messages=HI, tools=[TOOL], thinking={"type": "enabled", "budget_tokens": 1024}
        ) as stream,
    ):
        final = stream.get_final_message()
    kinds = [block.type for block in final.content]
    assert kinds == ["thinking", "tool_use"]
    assert final.stop_reason == "tool_use"
    assert isinstance(final.content[1].input["q"], str)
    assert final.usage.output_tokens > 0


def test_message_delta_usage_is_cumulative(http):
    body = {"model": MODEL, "max_tokens": 300, "messages": HI, "stream": True}
    text = http.post("/anthropic/v1/messages", json=body).text
    import json

    datas = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    start = datas[0]["message"]["usage"]
    delta = next(d for d in datas if d["type"] == "message_delta")["usage"]
    assert start["output_tokens"] == 1
    assert delta["input_tokens"] == start["input_tokens"]
    assert delta["output_tokens"] > 1


def test_count_tokens_matches_message_input(claude):
    with claude() as client:
        counted = client.messages.count_tokens(model=MODEL, messages=HI, system="Be brief.")
        message = client.messages.create(model=MODEL, max_tokens=50, messages=HI, system="Be brief.")
    assert counted.input_tokens == message.usage.input_tokens


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"max_tokens": 10, "messages": HI}, "model: Field required"),
        ({"model": MODEL, "messages": HI}, "max_tokens: Field required"),
        (
            {"model": MODEL, "max_tokens": 10, "messages": [{"role": "system", "content": "x"}]},
            'Unexpected role "system"',
        ),
        (
            {"model": MODEL, "max_tokens": 10, "messages": [*HI, {"role": "user", "content": "again"}]},
            "roles must alternate",
        ),
        ({"model": MODEL, "max_tokens": 10, "messages": HI, "tools": [{"name": "x"}]}, "input_schema: Field required"),
    ],
)
def test_invalid_requests_get_anthropic_400s(http, body, needle):
    response = http.post("/anthropic/v1/messages", json=body)
    assert response.status_code == 400
    error = response.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert needle in error["error"]["message"]


def test_more_than_four_breakpoints_is_refused(claude):
    block = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    with claude() as client, pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": [block] * 5}])
    assert "A maximum of 4 blocks with cache_control" in caught.value.message


def test_too_long_prompt(claude):
    with claude() as client, pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "word " * 170_000}])
    assert "prompt is too long" in caught.value.message


def test_unknown_model_is_404_not_found_error(claude):
    with claude() as client, pytest.raises(anthropic.NotFoundError) as caught:
        client.messages.create(model="claude-nope", max_tokens=10, messages=HI)
    assert caught.value.body["error"]["type"] == "not_found_error"


def test_anthropic_compatible_chinese_endpoint(claude):
    with claude("deepseek-anthropic") as client:
        message = client.messages.create(model="deepseek-chat", max_tokens=100, messages=HI)
    assert message.content[0].text
