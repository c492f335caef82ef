"""Responses translation without HTTP: request items and tools -> chat-completions, and chat
answers (whole, streamed, or Anthropic events) -> Response objects and the event sequence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from routing.http.errors import GatewayError
from routing.http.sse import SseSplitter, frame
from routing.translate import responses_json
from routing.translate.responses_chain import AnthropicToResponses
from routing.translate.responses_request import to_chat
from routing.translate.responses_stream import ChatToResponses
from routing.translate.stream_anthropic import AnthropicToOpenAI
from routing.usage.tracker import UsageTracker
from routing.wire import responses

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent-session-responses"
USAGE = {"input_tokens": 10, "output_tokens": 5}


def _fixture(name: str) -> dict[str, Any]:
    body: dict[str, Any] = orjson.loads((FIXTURES / name).read_bytes())
    return body


def test_agent_items_become_chat_messages_in_order():
    chat, _ = to_chat(_fixture("lite-turn3.json"))
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["system", "user", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "user"]
    custom = chat["messages"][3]["tool_calls"][0]
    assert custom["id"] == "call_0001" and orjson.loads(custom["function"]["arguments"]) == {"input": "ls -1\n"}
    assert chat["messages"][4] == {"role": "tool", "tool_call_id": "call_0001", "content": "README.md\nsrc\ntests\n"}
    assert chat["messages"][7]["tool_calls"][0]["function"] == {"name": "wait", "arguments": '{"cell_id":"7"}'}
    assert chat["messages"][5] == {"role": "assistant", "content": "Three entries: README.md, src, tests."}
    assert "reasoning" not in orjson.dumps(chat["messages"]).decode()  # reasoning and configuration items dropped


def test_namespaced_custom_and_builtin_tools_flatten_to_functions():
    body = _fixture("lite-turn1.json") | {
        "tools": [{"type": "web_search"}],
        "tool_choice": {"type": "custom", "name": "run_script"},
    }
    chat, shape = to_chat(body)
    names = [t["function"]["name"] for t in chat["tools"]]
    assert names == ["run_script", "wait", "sleep", "send_message"]
    run_script = chat["tools"][0]["function"]
    assert (
        run_script["parameters"]["properties"]["input"]["type"] == "string" and "grammar" in run_script["description"]
    )
    assert "encrypted" not in orjson.dumps(chat["tools"]).decode()
    assert chat["tool_choice"] == {"type": "function", "function": {"name": "run_script"}}
    assert shape.tools.ref("run_script").kind == "custom" and shape.tools.ref("sleep").namespace == "clock"


def test_same_tool_name_in_two_namespaces_is_qualified_and_maps_back():
    tools = [
        {"type": "namespace", "name": "a", "tools": [{"type": "function", "name": "go", "parameters": {}}]},
        {"type": "namespace", "name": "b", "tools": [{"type": "function", "name": "go", "parameters": {}}]},
    ]
    chat, shape = to_chat({"model": "m", "input": "hi", "tools": tools})
    assert [t["function"]["name"] for t in chat["tools"]] == ["go", "b__go"]
    assert shape.tools.ref("b__go").name == "go" and shape.tools.ref("b__go").namespace == "b"


def test_options_map_to_chat_parameters():
    body = {
        "model": "m", "input": "hi", "instructions": "", "max_output_tokens": 50, "temperature": 0.2, "top_p": 0.9,
        "stream": True, "user": "u", "text": {"format": {"type": "json_object"}}, "store": True, "metadata": {"a": 1},
    }  # fmt: skip
    chat, _ = to_chat(body)
    assert chat == {
        "model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 50, "temperature": 0.2,
        "top_p": 0.9, "user": "u", "response_format": {"type": "json_object"}, "stream": True,
    }  # fmt: skip


def test_content_parts_keep_images_and_join_assistant_text():
    image = {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"}
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": "look"}, image]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "a"}, {"type": "output_text", "text": "b"}],
        },
    ]
    chat, _ = to_chat({"model": "m", "input": items})
    assert chat["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": image["image_url"], "detail": "low"},
    }
    assert chat["messages"][1] == {"role": "assistant", "content": "a\nb"}


def test_view_refuses_previous_response_id_and_empty_input():
    with pytest.raises(GatewayError) as caught:
        responses.view({"model": "m", "input": "hi", "previous_response_id": "resp_1"})
    assert caught.value.status == 400 and caught.value.code == "previous_response_not_found"
    with pytest.raises(GatewayError):
        responses.view({"model": "m", "input": []})
    with pytest.raises(GatewayError):
        responses.view({"model": "m", "input": [{"type": "reasoning", "summary": []}]})


def test_view_reads_what_routing_needs():
    view = responses.view(_fixture("lite-turn2.json") | {"max_output_tokens": 300})
    assert view.model == "gpt-6.2-sol" and view.stream is True and view.max_tokens == 300
    assert view.cache_key == "0190f3a2-7c1e-7b11-9d2e-5a1f00c0ffee" and "tools" in view.needs
    assert view.forward is not None and view.forward["messages"] and view.input_estimate > 500


def _converter(tracker: UsageTracker, **kw: Any) -> ChatToResponses:
    _, shape = to_chat(_fixture("lite-turn1.json"))
    return ChatToResponses(tracker, lambda: {"output_tokens": 5}, response_id="resp_1", model="m", shape=shape, **kw)


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
    data: dict[str, Any] = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        data["usage"] = usage
    return frame(orjson.dumps(data))


def _events(converter: Any, raw: bytes) -> list[dict[str, Any]]:
    out = b"".join(converter.feed(e) for e in SseSplitter().feed(raw))
    return [orjson.loads(e.data) for e in SseSplitter().feed(out)]


def test_stream_reasoning_text_and_custom_tool_call_make_the_real_event_sequence():
    tracker = UsageTracker(10)
    call = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "run_script", "arguments": '{"input"'}}
    raw = (
        _chunk({"role": "assistant", "reasoning_content": "think"})
        + _chunk({"content": "Hi"})
        + _chunk({"tool_calls": [call]})
        + _chunk({"tool_calls": [{"index": 0, "function": {"arguments": ': "ls"}'}}]})
        + _chunk({}, "tool_calls")
        + frame(orjson.dumps({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}))
        + b"data: [DONE]\n\n"
    )
    events = _events(_converter(tracker), raw)
    kinds = [e["type"] for e in events]
    assert kinds == [
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
        "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.content_part.added", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done",
        "response.output_item.done", "response.completed",
    ]  # fmt: skip
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    final = events[-1]["response"]
    assert [i["type"] for i in final["output"]] == ["reasoning", "message", "custom_tool_call"]
    assert final["output"][2] | {"status": "x"} == {
        "id": "fc_resp_1_2", "type": "custom_tool_call", "call_id": "call_9", "name": "run_script", "input": "ls",
        "status": "x",
    }  # fmt: skip
    assert final["usage"] == {"output_tokens": 5} and tracker.provider_usage["completion_tokens"] == 5


def test_function_call_arguments_stream_as_deltas():
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "wait", "arguments": '{"cell_id":'}}
    raw = _chunk({"tool_calls": [call]}) + _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"7"}'}}]})
    events = _events(_converter(UsageTracker(1)), raw + _chunk({}, "tool_calls") + b"data: [DONE]\n\n")
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    [done] = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert "".join(deltas) == done["arguments"] == '{"cell_id":"7"}' and done["name"] == "wait"


def test_length_finish_is_incomplete_and_failures_are_response_failed():
    converter = _converter(UsageTracker(1))
    events = _events(converter, _chunk({"content": "cut"}, "length") + b"data: [DONE]\n\n")
    assert events[-1]["type"] == "response.incomplete"
    assert events[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    converter = _converter(UsageTracker(1))
    started = _events(converter, _chunk({"content": "half"}))
    failed = orjson.loads(SseSplitter().feed(converter.fail(GatewayError(502, "upstream_stream_cut", "cut")))[0].data)
    assert failed["type"] == "response.failed" and failed["sequence_number"] == len(started)
    assert failed["response"]["error"]["code"] == "upstream_stream_cut"


def test_anthropic_events_become_responses_events():
    tracker = UsageTracker(1)
    stages = AnthropicToResponses(
        AnthropicToOpenAI(tracker, dict, completion_id="x", model="m", include_usage=False),
        ChatToResponses(
            tracker,
            lambda: {"output_tokens": 3},
            response_id="r",
            model="m",
            shape=to_chat({"model": "m", "input": "hi"})[1],
            owns_usage=False,
        ),
    )
    anthropic = [
        ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 4, "output_tokens": 1}}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hey"}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    raw = b"".join(frame(orjson.dumps(data), name.encode()) for name, data in anthropic)
    events = _events(stages, raw)
    assert stages.done and events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == "Hey"
    assert tracker.provider_usage["output_tokens"] == 3 and (tracker.ascii_chars, tracker.other_chars) == (3, 0)


def test_whole_chat_answer_becomes_a_response_object():
    _, shape = to_chat(_fixture("lite-turn1.json") | {"instructions": "Be brief."})
    message = {
        "role": "assistant", "content": "Done.", "reasoning_content": "thinking",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "sleep", "arguments": '{"duration_ms":1}'}}],
    }  # fmt: skip
    completion = {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    body = responses_json.response(completion, shape, response_id="resp_1", model="m", usage=USAGE)
    assert body["object"] == "response" and body["status"] == "completed" and body["instructions"] == "Be brief."
    assert [i["type"] for i in body["output"]] == ["reasoning", "message", "function_call"]
    assert body["output"][2]["namespace"] == "clock" and body["output"][2]["call_id"] == "c1"
    assert body["usage"] == USAGE and body["store"] is False
