"""Anthropic Messages ⇄ OpenAI Chat: requests, responses and streams, unit round trips and SDKs end to end."""

from __future__ import annotations

import orjson
import pytest

from routing.http.sse import SseSplitter
from routing.translate import request_a2o, request_o2a, response
from routing.translate.stream_anthropic import AnthropicToOpenAI
from routing.translate.stream_openai import OpenAIToAnthropic
from routing.usage.tracker import UsageTracker

ANTHROPIC_BODY = {
    "model": "m",
    "max_tokens": 100,
    "system": [{"type": "text", "text": "Be brief."}],
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ],
    "tools": [
        {
            "name": "weather",
            "description": "Get weather",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ],
    "tool_choice": {"type": "any"},
    "stop_sequences": ["END"],
    "temperature": 0.2,
}


def test_anthropic_request_to_openai_and_back_keeps_meaning():
    oai = request_a2o.request(ANTHROPIC_BODY, upstream_model="u")
    assert oai["messages"][0] == {"role": "system", "content": "Be brief."}
    assert oai["messages"][2]["tool_calls"][0]["function"] == {"name": "weather", "arguments": '{"city":"Paris"}'}
    assert oai["messages"][3] == {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"}
    assert oai["messages"][1]["content"][1]["image_url"]["url"] == "data:image/png;base64,AAAA"
    assert oai["tool_choice"] == "required" and oai["stop"] == ["END"]
    back = request_o2a.request(oai, upstream_model="m")
    assert back["system"] == "Be brief."
    assert back["messages"][0]["content"] == ANTHROPIC_BODY["messages"][0]["content"]
    assert back["messages"][1] == ANTHROPIC_BODY["messages"][1]
    assert back["messages"][2]["content"] == ANTHROPIC_BODY["messages"][2]["content"]
    assert back["tools"] == ANTHROPIC_BODY["tools"] and back["tool_choice"] == {"type": "any"}
    assert back["stop_sequences"] == ["END"] and back["max_tokens"] == 100


def test_system_messages_inside_messages_translate_to_openai_system_messages():
    body = {
        "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "system", "content": [{"type": "text", "text": "env"}], "output_config": {}},
        ],
    }
    assert request_a2o.request(body, upstream_model="u")["messages"][1] == {"role": "system", "content": "env"}


def test_openai_request_to_anthropic_and_back():
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}
        ],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "max_completion_tokens": 30,
    }
    anth = request_o2a.request(body, upstream_model="u")
    assert anth["system"] == "sys" and anth["max_tokens"] == 30
    assert anth["messages"][1]["content"] == [{"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}}]
    assert anth["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "c1", "content": "r"}]
    assert anth["tool_choice"] == {"type": "tool", "name": "f"}
    back = request_a2o.request(anth, upstream_model="m")
    assert back["messages"] == [body["messages"][0], body["messages"][1], {**body["messages"][2]}, body["messages"][3]]
    assert back["tools"] == body["tools"] and back["tool_choice"] == body["tool_choice"]


@pytest.mark.parametrize(
    ("finish", "stop"), [("stop", "end_turn"), ("length", "max_tokens"), ("tool_calls", "tool_use")]
)
def test_non_streaming_response_round_trip(finish, stop):
    completion = {
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {
                    "role": "assistant",
                    "content": "hello",
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x":2}'}}],
                },
            }
        ],
    }
    message = response.openai_to_anthropic(completion, message_id="msg_1", model="m", usage={"input_tokens": 1})
    assert message["stop_reason"] == stop
    assert message["content"] == [
        {"type": "text", "text": "hello"},
        {"type": "tool_use", "id": "c1", "name": "f", "input": {"x": 2}},
    ]
    back = response.anthropic_to_openai(message, completion_id="c", model="m", usage={})
    assert back["choices"][0]["finish_reason"] == finish
    assert back["choices"][0]["message"]["content"] == "hello"
    assert back["choices"][0]["message"]["tool_calls"] == completion["choices"][0]["message"]["tool_calls"]


def _sse(events: list[tuple[str | None, dict | str]]) -> bytes:
    out = b""
    for name, data in events:
        payload = data.encode() if isinstance(data, str) else orjson.dumps(data)
        out += (b"event: " + name.encode() + b"\n" if name else b"") + b"data: " + payload + b"\n\n"
    return out


def _feed(converter, raw: bytes) -> bytes:
    out = b"".join(converter.feed(e) for e in SseSplitter().feed(raw))
    return out + converter.finish()


def test_openai_stream_to_anthropic_events_and_back():
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"index": 0, "delta": {"content": "Hel"}}]},
        {"choices": [{"index": 0, "delta": {"content": "lo"}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
                        ]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a":'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    ]
    upstream = _sse([(None, c) for c in chunks] + [(None, "[DONE]")])
    usage = {"input_tokens": 10, "output_tokens": 5}
    to_anthropic = OpenAIToAnthropic(UsageTracker(10), lambda: usage, message_id="msg_1", model="m")
    events = [(e.event.decode(), orjson.loads(e.data)) for e in SseSplitter().feed(_feed(to_anthropic, upstream))]
    names = [n for n, _ in events]
    assert names == ["message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
                     "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]  # fmt: skip
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use" and events[-2][1]["usage"] == usage
    assert to_anthropic.tracker.provider_usage["completion_tokens"] == 5
    back = AnthropicToOpenAI(
        UsageTracker(10), lambda: {"prompt_tokens": 10}, completion_id="c", model="m", include_usage=True
    )
    out = [e.data for e in SseSplitter().feed(_feed(back, _sse(events)))]
    assert out[-1] == b"[DONE]"
    parsed = [orjson.loads(d) for d in out[:-1]]
    text = "".join(p["choices"][0]["delta"].get("content") or "" for p in parsed if p["choices"])
    args = "".join(
        tc["function"].get("arguments", "")
        for p in parsed
        if p["choices"]
        for tc in p["choices"][0]["delta"].get("tool_calls") or []
    )
    assert text == "Hello" and args == '{"a":1}'
    assert [p["choices"][0]["finish_reason"] for p in parsed if p["choices"] and p["choices"][0]["finish_reason"]] == [
        "tool_calls"
    ]
    assert parsed[-1]["usage"] == {"prompt_tokens": 10}


# --- SDKs end to end, across dialects --------------------------------------------------------

TOOLS_OAI = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
TOOLS_ANTH = [
    {
        "name": "get_weather",
        "description": "Weather for a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]
ONLY_ANTHROPIC = {"provider": {"only": ["anthropic"]}}


def test_openai_sdk_served_by_an_anthropic_dialect_provider(oai):
    raw = oai.chat.completions.with_raw_response.create(
        model="claude-sonnet-4.5",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        max_tokens=50,
        extra_body=ONLY_ANTHROPIC,
    )
    assert raw.headers["x-tokenway-provider"] == "anthropic"
    completion = raw.parse()
    assert completion.choices[0].message.content and completion.choices[0].finish_reason in ("stop", "length")
    assert completion.usage.prompt_tokens > 0 and completion.usage.model_extra["cost"] > 0


def test_openai_sdk_tools_through_anthropic_dialect_streaming_and_not(oai):
    kwargs = {"model": "claude-sonnet-4.5", "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS_OAI,
              "tool_choice": "required", "max_tokens": 200, "extra_body": ONLY_ANTHROPIC}  # fmt: skip
    completion = oai.chat.completions.create(**kwargs)
    call = completion.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather" and isinstance(orjson.loads(call.function.arguments), dict)
    assert completion.choices[0].finish_reason == "tool_calls"
    chunks = list(oai.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True}))
    args = "".join(
        tc.function.arguments or "" for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []
    )
    assert isinstance(orjson.loads(args), dict)
    assert chunks[-1].usage.completion_tokens > 0


def test_anthropic_sdk_served_by_an_openai_dialect_provider_with_tools(claude):
    kwargs = {"model": "gpt-4.1-mini", "max_tokens": 200, "tools": TOOLS_ANTH, "tool_choice": {"type": "any"},
              "messages": [{"role": "user", "content": "Weather in Paris?"}]}  # fmt: skip
    message = claude.messages.create(**kwargs)
    assert message.stop_reason == "tool_use"
    tool_use = next(b for b in message.content if b.type == "tool_use")
    assert tool_use.name == "get_weather" and isinstance(tool_use.input, dict)
    with claude.messages.stream(**kwargs) as stream:
        final = stream.get_final_message()
    assert any(b.type == "tool_use" for b in final.content) and final.usage.output_tokens > 0
    follow = claude.messages.create(
        model="gpt-4.1-mini",
        max_tokens=50,
        messages=[
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [tool_use.model_dump()]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": "sunny"}]},
        ],
    )
    assert follow.content[0].text


def test_anthropic_sdk_streaming_text_through_openai_dialect(claude, tenant):
    with claude.messages.stream(
        model="gpt-4.1-mini", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text and final.stop_reason in ("end_turn", "max_tokens")
    [event] = tenant.wait_events(1)
    assert event["tokens"]["output"] == final.usage.output_tokens and event["dialect_in"] == "anthropic"


def test_reasoning_content_becomes_thinking_blocks_for_anthropic_callers(claude, tenant):
    kwargs = {
        "model": "deepseek-r1",
        "max_tokens": 300,
        "messages": [{"role": "user", "content": "Why is the sky blue?"}],
    }
    message = claude.messages.create(**kwargs)
    assert message.content[0].type == "thinking" and message.content[0].thinking
    assert any(b.type == "text" for b in message.content)
    with claude.messages.stream(**kwargs) as stream:
        final = stream.get_final_message()
    assert final.content[0].type == "thinking" and final.content[0].thinking
    events = tenant.wait_events(2)
    assert all(e["tokens"]["reasoning"] > 0 for e in events)


def test_thinking_blocks_become_reasoning_content_for_openai_callers():
    message = {
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "42"}],
        "stop_reason": "end_turn",
    }
    completion = response.anthropic_to_openai(message, completion_id="c", model="m", usage={})
    assert completion["choices"][0]["message"]["reasoning_content"] == "hmm"
    assert completion["choices"][0]["message"]["content"] == "42"
    events = [
        ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 1}}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    converter = AnthropicToOpenAI(UsageTracker(1), dict, completion_id="c", model="m", include_usage=False)
    out = [orjson.loads(e.data) for e in SseSplitter().feed(_feed(converter, _sse(events))) if e.data != b"[DONE]"]
    assert any(c["choices"][0]["delta"].get("reasoning_content") == "hmm" for c in out)
