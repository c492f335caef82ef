"""``POST /v1/responses`` with the real OpenAI SDK, through the gateway to simulated providers of
both dialects: whole answers and streams, a function-tool round trip, usage events, errors."""

from __future__ import annotations

import openai
import pytest
import requests as httpx

from tests.routing.conftest import sim_requests

MODEL_OPENAI = "gpt-4.1-mini"  # one offering, OpenAI dialect
MODEL_ANTHROPIC = "claude-haiku-4.5"  # one offering, Anthropic dialect
BOTH = pytest.mark.parametrize(("model", "provider"), [(MODEL_OPENAI, "openai"), (MODEL_ANTHROPIC, "anthropic")])
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@BOTH
def test_whole_response_has_text_usage_and_provenance(oai, tenant, model, provider):
    raw = oai.responses.with_raw_response.create(model=model, input="Say hi", instructions="Be brief.")
    response = raw.parse()
    assert response.status == "completed" and response.object == "response"
    assert response.output_text
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    assert raw.headers["x-tokenway-provider"] == provider
    [event] = tenant.wait_events(1)
    assert event["request_id"] == raw.headers["x-request-id"]
    assert event["dialect_in"] == "responses" and event["status"] == "ok" and event["provider"] == provider
    assert event["tokens"]["output"] == response.usage.output_tokens


@BOTH
def test_stream_gives_the_event_sequence_and_final_usage(oai, tenant, model, provider):
    events = list(oai.responses.create(model=model, input="Say hi", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    for kind in ("response.output_item.added", "response.content_part.added", "response.output_text.delta",
                 "response.output_text.done", "response.content_part.done", "response.output_item.done"):  # fmt: skip
        assert kind in kinds
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    final = events[-1].response
    assert final.output_text == text
    [event] = tenant.wait_events(1)
    assert event["dialect_in"] == "responses" and event["stream"] is True and event["usage_source"] == "provider"
    assert event["tokens"]["output"] == final.usage.output_tokens > 0
    assert final.usage.input_tokens == event["tokens"]["input_uncached"] + event["tokens"]["cache_read"]
    assert final.usage.input_tokens_details.cached_tokens == event["tokens"]["cache_read"]


@BOTH
def test_stream_helper_accumulates_a_consistent_response(oai, model, provider):
    with oai.responses.stream(model=model, input="Say hi") as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    assert final.status == "completed" and final.output_text


@BOTH
def test_function_tool_round_trip(oai, tenant, sim, model, provider):
    first = oai.responses.create(model=model, input="Weather in Paris?", tools=[WEATHER])
    [call] = [item for item in first.output if item.type == "function_call"]
    assert call.name == "get_weather" and call.call_id and "city" in call.arguments
    forwarded = sim_requests(sim, provider, 1)[0]["json"]
    assert forwarded["tools"]
    second = oai.responses.create(
        model=model,
        tools=[WEATHER],
        input=[
            {"role": "user", "content": "Weather in Paris?"},
            call.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 21 C"},
        ],
    )
    assert second.output_text and not [item for item in second.output if item.type == "function_call"]
    received = sim_requests(sim, provider, 1)[0]["json"]["messages"]
    assert "sunny, 21 C" in str(received[-1])
    assert [e["dialect_in"] for e in tenant.wait_events(2)] == ["responses", "responses"]


@BOTH
def test_streamed_function_call_has_argument_deltas_and_done_item(oai, model, provider):
    events = list(oai.responses.create(model=model, input="Weather in Paris?", tools=[WEATHER], stream=True))
    kinds = [e.type for e in events]
    assert "response.function_call_arguments.delta" in kinds and "response.function_call_arguments.done" in kinds
    [done] = [e.item for e in events if e.type == "response.output_item.done" and e.item.type == "function_call"]
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert done.arguments == deltas and done.name == "get_weather"
    assert events[-1].type == "response.completed"


def test_custom_tool_call_comes_back_as_custom_tool_call(oai, sim):
    tool = {"type": "custom", "name": "run_script", "description": "Run a script.",
            "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}}  # fmt: skip
    response = oai.responses.create(model=MODEL_OPENAI, input="List the files.", tools=[tool])
    [call] = [item for item in response.output if item.type == "custom_tool_call"]
    assert call.name == "run_script" and isinstance(call.input, str) and call.input
    [function] = sim_requests(sim, "openai", 1)[0]["json"]["tools"]
    assert function["function"]["parameters"]["required"] == ["input"]
    assert "start: /.+/" in function["function"]["description"]


def test_reasoning_from_the_upstream_becomes_a_reasoning_item(oai):
    events = list(oai.responses.create(model="deepseek-r1", input="Say hi", stream=True))
    kinds = [e.type for e in events]
    assert "response.reasoning_text.delta" in kinds
    final = events[-1].response
    assert [item.type for item in final.output][:1] == ["reasoning"]
    assert final.usage.output_tokens_details.reasoning_tokens >= 0


def test_previous_response_id_is_a_clear_400_in_the_openai_error_shape(oai, tenant):
    with pytest.raises(openai.BadRequestError) as caught:
        oai.responses.create(model=MODEL_OPENAI, input="hi", previous_response_id="resp_123")
    error = caught.value.body
    assert caught.value.status_code == 400
    assert error["code"] == "previous_response_not_found" and error["param"] == "previous_response_id"
    assert "input" in error["message"]


def test_unknown_model_and_bad_key_use_the_openai_error_shape(gateway, oai):
    with pytest.raises(openai.NotFoundError) as caught:
        oai.responses.create(model="no-such-model-xyz", input="hi")
    assert caught.value.body["code"] == "model_not_found"
    response = httpx.post(f"{gateway.base_url}/v1/responses", json={"model": MODEL_OPENAI, "input": "hi"})
    assert response.status_code == 401
    assert set(response.json()["error"]) >= {"message", "type", "code", "param"}


def test_unknown_fields_and_items_are_accepted(gateway, tenant, sim):
    body = {
        "model": MODEL_OPENAI, "instructions": "", "tools": [{"type": "web_search"}], "store": True,
        "include": ["reasoning.encrypted_content"], "prompt_cache_key": "k1", "client_metadata": {"a": "b"},
        "metadata": {"x": "y"}, "service_tier": "auto", "user": "u1", "reasoning": {"effort": "low"},
        "text": {"verbosity": "low", "format": {"type": "text"}}, "some_future_field": {"nested": True},
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}],
                   "future_metadata": {"k": 1}}, {"type": "configuration_update", "reasoning": {"effort": "low"}},
                  {"type": "brand_new_item", "payload": 1}],
    }  # fmt: skip
    response = httpx.post(
        f"{gateway.base_url}/v1/responses", json=body, headers={"authorization": f"Bearer {tenant.key}"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["output"][0]["type"] == "message"
    forwarded = sim_requests(sim, "openai", 1)[0]["json"]
    assert forwarded["messages"] == [{"role": "user", "content": "hi"}] and "tools" not in forwarded


def test_json_schema_text_format_becomes_response_format(oai, sim):
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    oai.responses.create(
        model=MODEL_OPENAI,
        input="Answer in JSON.",
        text={"format": {"type": "json_schema", "name": "answer", "schema": schema, "strict": True}},
    )
    forwarded = sim_requests(sim, "openai", 1)[0]["json"]
    assert forwarded["response_format"]["json_schema"]["schema"] == schema


def test_get_is_refused_at_once_so_clients_fall_back_to_post(gateway, tenant):
    headers = {"authorization": f"Bearer {tenant.key}", "openai-beta": "responses_websockets=2026-02-04"}
    response = httpx.get(f"{gateway.base_url}/v1/responses", headers=headers, timeout=2)
    assert response.status_code == 426
    assert response.json()["error"]["code"] == "websocket_unsupported"


def test_websocket_upgrade_is_refused_at_once(gateway, tenant):
    import websockets.exceptions
    import websockets.sync.client

    url = gateway.base_url.replace("http://", "ws://") + "/v1/responses"
    with pytest.raises(websockets.exceptions.InvalidStatus) as caught:
        websockets.sync.client.connect(
            url, additional_headers={"authorization": f"Bearer {tenant.key}"}, open_timeout=2
        )
    assert caught.value.response.status_code == 403


def test_stream_cut_mid_answer_ends_with_response_failed(oai, sim, tenant):
    from tests.routing.conftest import add_fault

    add_fault(sim, provider="openai", kind="stream_cut", count=1)
    events = list(oai.responses.create(model=MODEL_OPENAI, input="Say hi", stream=True, max_output_tokens=200))
    assert events[0].type == "response.created" and events[-1].type == "response.failed"
    assert events[-1].response.error.code == "upstream_stream_cut"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    [event] = tenant.wait_events(1)
    assert event["status"] == "upstream_error" and event["dialect_in"] == "responses"
