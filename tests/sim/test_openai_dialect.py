from __future__ import annotations

import json

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city", "days"],
            },
        },
    }
]
HELLO = [{"role": "user", "content": "Say something"}]


def test_openai_non_streaming_answer_has_usage_details(oai):
    with oai("openai") as client:
        reply = client.chat.completions.create(model="gpt-4.1", messages=HELLO)
    assert reply.object == "chat.completion"
    assert reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.content
    usage = reply.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details.cached_tokens == 0
    assert usage.completion_tokens_details.reasoning_tokens == 0


def test_stream_with_include_usage_ends_with_choiceless_usage_chunk(oai):
    with oai("openai") as client:
        chunks = list(
            client.chat.completions.create(
                model="gpt-4.1-mini", messages=HELLO, stream=True, stream_options={"include_usage": True}
            )
        )
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices == []
    assert chunks[-1].usage.completion_tokens > 0
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert all(chunk.usage is None for chunk in chunks[:-1])
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text


def test_stream_without_include_usage_has_no_usage(oai):
    with oai("openai") as client:
        chunks = list(client.chat.completions.create(model="gpt-4.1", messages=HELLO, stream=True))
    assert all(chunk.usage is None for chunk in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_tool_call_non_streaming_matches_schema(oai):
    with oai("openai") as client:
        reply = client.chat.completions.create(
            model="gpt-4.1", messages=[{"role": "user", "content": "Weather in Paris?"}], tools=TOOLS
        )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    assert call.function.name == "get_weather"
    args = json.loads(call.function.arguments)
    assert isinstance(args["city"], str) and isinstance(args["days"], int)


def test_tool_call_streams_as_fragments_that_join_to_json(oai):
    with oai("deepseek") as client:
        chunks = list(client.chat.completions.create(model="deepseek-chat", messages=HELLO, tools=TOOLS, stream=True))
    deltas = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert deltas[0].id.startswith("call_") and deltas[0].function.name == "get_weather"
    assert len(deltas) > 2
    assert json.loads("".join(d.function.arguments or "" for d in deltas))["city"]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_after_tool_result_the_model_answers_in_text(oai):
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris","days":1}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    with oai("openai") as client:
        reply = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=TOOLS)
    assert reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.content


def test_json_object_mode_returns_valid_json(oai):
    with oai("openai") as client:
        reply = client.chat.completions.create(model="gpt-4.1", messages=HELLO, response_format={"type": "json_object"})
    assert isinstance(json.loads(reply.choices[0].message.content), dict)


def test_models_endpoint_lists_upstream_names(oai):
    with oai("siliconflow") as client:
        ids = {model.id for model in client.models.list()}
    assert "deepseek-ai/DeepSeek-V3.2" in ids


def test_deepseek_usage_and_reasoning_content(oai, http):
    with oai("deepseek") as client:
        chunks = list(
            client.chat.completions.create(
                model="deepseek-reasoner", messages=HELLO, stream=True, stream_options={"include_usage": True}
            )
        )
    reasoning = [c.choices[0].delta.model_extra.get("reasoning_content") for c in chunks if c.choices]
    assert any(reasoning)
    usage = chunks[-1].usage.model_dump()
    assert usage["prompt_cache_hit_tokens"] + usage["prompt_cache_miss_tokens"] == usage["prompt_tokens"]
    assert usage["completion_tokens_details"]["reasoning_tokens"] > 0


def test_moonshot_reports_top_level_cached_tokens_and_usage_in_final_choice(http):
    body = {"model": "kimi-k2-0905-preview", "messages": HELLO}
    usage = http.post("/moonshot/v1/chat/completions", json=body).json()["usage"]
    assert set(usage) == {"prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens"}
    text = http.post("/moonshot/v1/chat/completions", json={**body, "stream": True}).text
    frames = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]
    assert frames[-1]["choices"][0]["usage"]["cached_tokens"] == 0


def test_zhipu_and_qwen_usage_shapes(http):
    zhipu = http.post("/zhipu/v1/chat/completions", json={"model": "glm-4.6", "messages": HELLO}).json()["usage"]
    assert zhipu["prompt_tokens_details"] == {"cached_tokens": 0}
    assert "completion_tokens_details" not in zhipu
    qwen = http.post("/dashscope/v1/chat/completions", json={"model": "qwen3-max", "messages": HELLO}).json()["usage"]
    assert qwen["prompt_tokens_details"]["cached_tokens"] == 0
    text = http.post("/zhipu/v1/chat/completions", json={"model": "glm-4.6", "messages": HELLO, "stream": True}).text
    last = json.loads([line for line in text.splitlines() if line.startswith("data: {")][-1][6:])
    assert last["choices"][0]["finish_reason"] == "stop" and last["usage"]["total_tokens"] > 0


def test_openai_rate_limit_headers_on_success(http):
    response = http.post("/openai/v1/chat/completions", json={"model": "gpt-4.1", "messages": HELLO})
    assert response.headers["x-ratelimit-limit-requests"] == "5000"
    assert response.headers["x-ratelimit-remaining-requests"] == "4999"
    assert response.headers["x-ratelimit-reset-requests"]
    assert response.headers["x-ratelimit-limit-tokens"] == "2000000"
    assert response.headers["x-request-id"].startswith("req_")


def test_aggregator_reports_cost_and_every_provider_reports_billed_micros(http):
    response = http.post("/openrouter/v1/chat/completions", json={"model": "openai/gpt-4.1", "messages": HELLO})
    usage = response.json()["usage"]
    assert usage["cost"] * 1_000_000 == int(response.headers["x-sim-billed-cost-micros"])
