"""Each row of the translation table (routing/translate/features.py) checked against the translators:
what an OpenAI-dialect and an Anthropic-dialect offering are sent, or that the feature is refused.
The SDK tests through the gateway are in test_dialect_features.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from routing.translate import features, request_a2o, request_o2a
from routing.translate.refusal import refused
from routing.translate.responses_request import to_chat
from routing.translate.structured import TOOL_NAME

Body = dict[str, Any]
USER = [{"role": "user", "content": "hi"}]
TOOL = {"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}
A_TOOL = {"name": "w", "input_schema": {"type": "object"}}
PDF = "data:application/pdf;base64,AAAA"


def chat(**fields: Any) -> Body:
    return {"model": "m", "messages": USER, "max_tokens": 100, **fields}


def messages(**fields: Any) -> Body:
    return {"model": "m", "messages": USER, "max_tokens": 100, **fields}


def to_anthropic(body: Body) -> Body:
    assert refused("openai", body, "anthropic") is None
    return request_o2a.request(body, upstream_model="u")


def to_openai(body: Body) -> Body:
    assert refused("anthropic", body, "openai") is None
    return request_a2o.request(body, upstream_model="u")


def refused_by(caller: str, body: Body, upstream: str) -> str:
    refusal = refused(caller, body, upstream)
    assert refusal is not None
    return refusal.param


def _json_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    out = to_anthropic(chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}))
    assert out["tools"] == [{"name": TOOL_NAME, "description": out["tools"][0]["description"], "input_schema": schema}]
    assert out["tool_choice"] == {"type": "tool", "name": TOOL_NAME}


def _json_object() -> None:
    out = to_anthropic(chat(response_format={"type": "json_object"}))
    assert out["tools"][0]["input_schema"] == {"type": "object"} and out["tool_choice"]["name"] == TOOL_NAME


def _chat_tools() -> None:
    out = to_anthropic(chat(tools=[TOOL], tool_choice="required"))
    assert out["tools"] == [A_TOOL] and out["tool_choice"] == {"type": "any"}


def _chat_unknown_tool() -> None:
    body = chat(tools=[TOOL], tool_choice={"type": "function", "function": {"name": "x"}})
    assert refused_by("openai", body, "openai") == refused_by("openai", body, "anthropic") == "tool_choice"


def _parallel() -> None:
    out = to_anthropic(chat(tools=[TOOL], parallel_tool_calls=False))
    assert out["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


def _reasoning_effort() -> None:
    assert to_anthropic(chat(reasoning_effort="medium", max_tokens=20000))["thinking"]["budget_tokens"] == 8192
    assert "thinking" not in to_anthropic(chat(reasoning_effort="none"))
    small = to_anthropic(chat(reasoning_effort="high", max_tokens=100))
    assert small["thinking"]["budget_tokens"] == 1024 and small["max_tokens"] == 1124
    assert "thinking" not in request_o2a.request(chat(reasoning_effort="high"), upstream_model="u", thinks=False)


def _reasoning_object() -> None:
    out = to_anthropic(chat(reasoning={"max_tokens": 3000}, max_tokens=10000))
    assert out["thinking"] == {"type": "enabled", "budget_tokens": 3000}


def _n() -> None:
    assert refused_by("openai", chat(n=2), "anthropic") == "n" and refused("openai", chat(n=2), "openai") is None


def _logprobs() -> None:
    assert refused_by("openai", chat(logprobs=True, top_logprobs=2), "anthropic") == "logprobs"


def _chat_top_k() -> None:
    assert to_anthropic(chat(top_k=5))["top_k"] == 5


def _stop() -> None:
    assert to_anthropic(chat(stop="END"))["stop_sequences"] == ["END"]


def _seed() -> None:
    assert refused_by("openai", chat(seed=1), "anthropic") == "seed"


def _penalties() -> None:
    assert refused_by("openai", chat(presence_penalty=0.5), "anthropic") == "presence_penalty"
    assert refused_by("openai", chat(logit_bias={"1": 5}), "anthropic") == "logit_bias"
    assert refused("openai", chat(frequency_penalty=0), "anthropic") is None


def _images() -> None:
    part = {"type": "image_url", "image_url": {"url": "https://x/a.png"}}
    out = to_anthropic(chat(messages=[{"role": "user", "content": [part]}]))
    assert out["messages"][0]["content"][0] == {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}}


def _chat_files() -> None:
    part = {"type": "file", "file": {"file_data": PDF, "filename": "a.pdf"}}
    out = to_anthropic(chat(messages=[{"role": "user", "content": [part]}]))
    block = out["messages"][0]["content"][0]
    assert block == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": "AAAA"},
        "title": "a.pdf",
    }


def _chat_file_ids() -> None:
    for part in ({"type": "file", "file": {"file_id": "f1"}}, {"type": "input_audio", "input_audio": {}}):
        assert refused_by("openai", chat(messages=[{"role": "user", "content": [part]}]), "anthropic") == "messages"


def _audio() -> None:
    assert refused_by("openai", chat(modalities=["text", "audio"]), "anthropic") == "modalities"
    assert refused_by("openai", chat(prediction={"type": "content", "content": "x"}), "anthropic") == "prediction"
    assert refused_by("openai", chat(web_search_options={}), "anthropic") == "web_search_options"


def _max_tokens() -> None:
    assert to_anthropic(chat(max_completion_tokens=77))["max_tokens"] == 77


def _user() -> None:
    assert to_anthropic(chat(user="u1"))["metadata"] == {"user_id": "u1"}


def _output_format() -> None:
    schema = {"type": "object"}
    for fields in (
        {"output_format": {"type": "json_schema", "schema": schema}},
        {"output_config": {"format": {"type": "json_schema", "schema": schema}}},
    ):
        assert to_openai(messages(**fields))["response_format"]["json_schema"]["schema"] == schema


def _messages_tools() -> None:
    out = to_openai(messages(tools=[A_TOOL], tool_choice={"type": "tool", "name": "w"}))
    assert out["tools"] == [TOOL] and out["tool_choice"] == {"type": "function", "function": {"name": "w"}}


def _messages_unknown_tool() -> None:
    body = messages(tools=[A_TOOL], tool_choice={"type": "tool", "name": "x"})
    assert refused_by("anthropic", body, "anthropic") == refused_by("anthropic", body, "openai") == "tool_choice"


def _disable_parallel() -> None:
    out = to_openai(messages(tools=[A_TOOL], tool_choice={"type": "auto", "disable_parallel_tool_use": True}))
    assert out["parallel_tool_calls"] is False and out["tool_choice"] == "auto"


def _server_tools() -> None:
    body = messages(tools=[{"type": "web_search_20250305", "name": "web_search"}])
    assert refused_by("anthropic", body, "openai") == "tools" and refused("anthropic", body, "anthropic") is None
    assert refused_by("anthropic", messages(mcp_servers=[{"url": "x"}]), "openai") == "mcp_servers"


def _thinking() -> None:
    for budget, effort in ((1024, "low"), (4096, "medium"), (32000, "high")):
        out = to_openai(messages(thinking={"type": "enabled", "budget_tokens": budget}))
        assert out["reasoning_effort"] == effort
    assert "reasoning_effort" not in to_openai(messages(thinking={"type": "disabled"}))
    body = messages(thinking={"type": "enabled", "budget_tokens": 4096})
    assert "reasoning_effort" not in request_a2o.request(body, upstream_model="u", thinks=False)


def _messages_top_k() -> None:
    assert refused_by("anthropic", messages(top_k=5), "openai") == "top_k"


def _stop_sequences() -> None:
    assert to_openai(messages(stop_sequences=["END"]))["stop"] == ["END"]


def _image_blocks() -> None:
    block = {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}}
    out = to_openai(messages(messages=[{"role": "user", "content": [block]}]))
    assert out["messages"][0]["content"] == [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}]


def _document(source: Body) -> Body:
    return messages(
        messages=[{"role": "user", "content": [{"type": "document", "source": source}, {"type": "text", "text": "?"}]}]
    )


def _pdf_documents() -> None:
    out = to_openai(_document({"type": "base64", "media_type": "application/pdf", "data": "AAAA"}))
    assert out["messages"][0]["content"][0] == {"type": "file", "file": {"file_data": PDF, "filename": "document.pdf"}}


def _text_documents() -> None:
    out = to_openai(_document({"type": "text", "media_type": "text/plain", "data": "the text"}))
    assert out["messages"][0]["content"][0] == {"type": "text", "text": "the text"}


def _url_documents() -> None:
    assert refused_by("anthropic", _document({"type": "url", "url": "https://x/a.pdf"}), "openai") == "messages"


def _metadata_user() -> None:
    assert to_openai(messages(metadata={"user_id": "u1"}))["user"] == "u1"


def _text_format() -> None:
    chat_body, _ = to_chat(
        {
            "model": "m",
            "input": "hi",
            "text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}},
        }
    )
    assert chat_body["response_format"]["type"] == "json_schema"
    assert to_anthropic(chat_body)["tool_choice"] == {"type": "tool", "name": TOOL_NAME}


def _responses_reasoning() -> None:
    chat_body, _ = to_chat({"model": "m", "input": "hi", "reasoning": {"effort": "low"}, "max_output_tokens": 5000})
    assert chat_body["reasoning_effort"] == "low" and to_anthropic(chat_body)["thinking"]["budget_tokens"] == 2048


def _responses_tools() -> None:
    tool = {"type": "function", "name": "w", "parameters": {"type": "object"}}
    chat_body, _ = to_chat(
        {"model": "m", "input": "hi", "tools": [tool], "tool_choice": "required", "parallel_tool_calls": False}
    )
    assert chat_body["parallel_tool_calls"] is False
    assert to_anthropic(chat_body)["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}


def _max_output_tokens() -> None:
    chat_body, _ = to_chat({"model": "m", "input": "hi", "max_output_tokens": 33})
    assert to_anthropic(chat_body)["max_tokens"] == 33


def _input_files() -> None:
    content = [{"type": "input_file", "file_data": PDF, "filename": "a.pdf"}, {"type": "input_text", "text": "?"}]
    chat_body, _ = to_chat({"model": "m", "input": [{"role": "user", "content": content}]})
    assert chat_body["messages"][0]["content"][0] == {"type": "file", "file": {"file_data": PDF, "filename": "a.pdf"}}
    assert to_anthropic(chat_body)["messages"][0]["content"][0]["type"] == "document"


CHECKS: dict[tuple[str, str], Callable[[], None]] = {
    ("chat", "response_format: json_schema"): _json_schema,
    ("chat", "response_format: json_object"): _json_object,
    ("chat", "tools, tool_choice (auto, required, none, named)"): _chat_tools,
    ("chat", "tool_choice naming a tool not in tools"): _chat_unknown_tool,
    ("chat", "parallel_tool_calls: false"): _parallel,
    ("chat", "reasoning_effort"): _reasoning_effort,
    ("chat", "reasoning {effort, max_tokens}"): _reasoning_object,
    ("chat", "n > 1"): _n,
    ("chat", "logprobs, top_logprobs"): _logprobs,
    ("chat", "top_k"): _chat_top_k,
    ("chat", "stop"): _stop,
    ("chat", "seed"): _seed,
    ("chat", "frequency_penalty, presence_penalty (non-zero), logit_bias"): _penalties,
    ("chat", "image_url parts"): _images,
    ("chat", "file parts (file_data)"): _chat_files,
    ("chat", "file parts (file_id), input_audio parts"): _chat_file_ids,
    ("chat", "audio, modalities (audio), prediction, web_search_options"): _audio,
    ("chat", "max_tokens, max_completion_tokens"): _max_tokens,
    ("chat", "user"): _user,
    ("messages", "output_format / output_config.format (json_schema)"): _output_format,
    ("messages", "tools, tool_choice (auto, any, none, tool)"): _messages_tools,
    ("messages", "tool_choice.name not in tools"): _messages_unknown_tool,
    ("messages", "tool_choice.disable_parallel_tool_use"): _disable_parallel,
    ("messages", "server tools (web_search, code_execution, ...), mcp_servers, container"): _server_tools,
    ("messages", "thinking"): _thinking,
    ("messages", "top_k"): _messages_top_k,
    ("messages", "stop_sequences"): _stop_sequences,
    ("messages", "image blocks"): _image_blocks,
    ("messages", "document blocks (base64 PDF)"): _pdf_documents,
    ("messages", "document blocks (text source)"): _text_documents,
    ("messages", "document blocks (url or file source)"): _url_documents,
    ("messages", "metadata.user_id"): _metadata_user,
    ("responses", "text.format (json_schema, json_object)"): _text_format,
    ("responses", "reasoning.effort"): _responses_reasoning,
    ("responses", "tools, tool_choice, parallel_tool_calls"): _responses_tools,
    ("responses", "max_output_tokens"): _max_output_tokens,
    ("responses", "input_image, input_file (file_data)"): _input_files,
}


def test_every_row_of_the_table_has_a_check():
    assert set(CHECKS) == {(row.caller, row.field) for row in features.TABLE}


@pytest.mark.parametrize("row", features.TABLE, ids=lambda row: f"{row.caller}:{row.field}")
def test_row(row: features.Feature) -> None:
    CHECKS[(row.caller, row.field)]()
