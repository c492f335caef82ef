"""Request features across dialects, through the real gateway and simulator with the official SDKs:
structured output, thinking ⇄ reasoning effort, documents, and the features one dialect must refuse."""

from __future__ import annotations

import base64
from pathlib import Path

import anthropic
import openai
import orjson
import pydantic
import pytest

from routing.translate import features
from routing.translate.structured import TOOL_NAME
from tests.routing.conftest import sim_requests

ONLY = lambda *slugs: {"provider": {"only": list(slugs)}}  # noqa: E731
PDF = base64.b64encode(b"%PDF-1.4 a small document").decode()


class Weather(pydantic.BaseModel):
    city: str
    celsius: int
    sunny: bool
    note: str | None = None


def _last_body(sim, provider: str) -> dict:
    return orjson.loads(sim_requests(sim, provider, limit=1)[0]["body"])


def test_the_feature_table_in_the_docs_is_the_one_in_the_code():
    doc = (Path(__file__).parents[2] / "docs" / "gateway.md").read_text(encoding="utf-8")
    between = doc.split("<!-- feature-table:start -->\n", 1)[1].split("<!-- feature-table:end -->", 1)[0]
    assert between == features.markdown()
    assert {row.caller for row in features.TABLE} == set(features.CALLERS)
    allowed = {features.NATIVE, features.TRANSLATED, features.EMULATED, features.REFUSED}
    assert all({row.openai, row.anthropic} <= allowed for row in features.TABLE)


# --- structured output on the Messages API: a forced tool, read back as content ------------------


def test_json_schema_served_by_an_anthropic_dialect_offering_parses_into_the_callers_model(oai, sim):
    raw = oai.beta.chat.completions.with_raw_response.parse(
        model="claude-sonnet-4.5",
        messages=[{"role": "user", "content": "Weather in Paris as JSON."}],
        response_format=Weather,
        max_tokens=300,
        extra_body=ONLY("anthropic"),
    )
    assert raw.headers["x-tokenway-provider"] == "anthropic"
    completion = raw.parse()
    message = completion.choices[0].message
    assert isinstance(message.parsed, Weather) and message.refusal is None
    assert completion.choices[0].finish_reason == "stop" and not message.tool_calls
    sent = _last_body(sim, "anthropic")
    assert sent["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert sent["tools"][-1]["input_schema"]["properties"]["celsius"] == {"title": "Celsius", "type": "integer"}


def test_json_schema_streamed_from_an_anthropic_dialect_offering_parses_too(oai):
    with oai.beta.chat.completions.stream(
        model="claude-sonnet-4.5",
        messages=[{"role": "user", "content": "Weather in Paris as JSON."}],
        response_format=Weather,
        max_tokens=300,
        extra_body=ONLY("anthropic"),
    ) as stream:
        final = stream.get_final_completion()
    assert isinstance(final.choices[0].message.parsed, Weather)
    assert final.choices[0].finish_reason == "stop"


def test_json_schema_on_claude_with_no_provider_pinned_parses_every_time(oai):
    for _ in range(20):
        completion = oai.beta.chat.completions.parse(
            model="claude-sonnet-4.5",
            messages=[{"role": "user", "content": "Weather in Paris as JSON."}],
            response_format=Weather,
            max_tokens=300,
        )
        assert isinstance(completion.choices[0].message.parsed, Weather)


def test_json_object_mode_on_an_anthropic_dialect_offering_answers_a_json_object(oai):
    completion = oai.chat.completions.create(
        model="claude-sonnet-4.5",
        messages=[{"role": "user", "content": "Answer in JSON."}],
        response_format={"type": "json_object"},
        max_tokens=200,
        extra_body=ONLY("anthropic"),
    )
    assert isinstance(orjson.loads(completion.choices[0].message.content), dict)


def test_json_mode_required_keeps_the_anthropic_offering_that_emulates_it(oai):
    raw = oai.chat.completions.with_raw_response.create(
        model="claude-sonnet-4.5",
        messages=[{"role": "user", "content": "Answer in JSON."}],
        response_format={"type": "json_object"},
        max_tokens=200,
        extra_body={"provider": {"only": ["anthropic"], "require_parameters": True}},
    )
    assert raw.headers["x-tokenway-provider"] == "anthropic"


def test_responses_text_format_served_by_an_anthropic_dialect_offering_parses(oai):
    response = oai.responses.parse(
        model="claude-sonnet-4.5",
        input="Weather in Paris as JSON.",
        text_format=Weather,
        max_output_tokens=300,
        extra_body=ONLY("anthropic"),
    )
    assert isinstance(response.output_parsed, Weather)


def test_responses_envelope_has_the_fields_the_official_schema_requires(oai):
    raw = oai.responses.with_raw_response.create(
        model="claude-sonnet-4.5", input="hi", max_output_tokens=50, extra_body=ONLY("anthropic")
    )
    body = orjson.loads(raw.content)
    assert body["text"] == {"format": {"type": "text"}} and "user" not in body


# --- thinking ⇄ reasoning effort -------------------------------------------------------------


def test_anthropic_thinking_reaches_an_openai_dialect_offering_as_reasoning_effort(claude, sim):
    message = claude.messages.create(
        model="claude-sonnet-4.5",
        max_tokens=8000,
        thinking={"type": "enabled", "budget_tokens": 4096},
        messages=[{"role": "user", "content": "Why is the sky blue?"}],
        extra_body=ONLY("openrouter"),
    )
    assert message.content
    assert _last_body(sim, "openrouter")["reasoning_effort"] == "medium"


def test_thinking_is_not_sent_to_an_offering_that_does_not_declare_reasoning(claude, sim):
    message = claude.messages.create(
        model="gpt-4.1-mini",
        max_tokens=2000,
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": "hi"}],
    )
    assert message.content and "reasoning_effort" not in _last_body(sim, "openai")


def test_reasoning_effort_reaches_an_anthropic_dialect_offering_as_thinking(oai, sim):
    completion = oai.chat.completions.create(
        model="claude-sonnet-4.5",
        messages=[{"role": "user", "content": "Why is the sky blue?"}],
        reasoning_effort="low",
        max_completion_tokens=4000,
        extra_body=ONLY("anthropic"),
    )
    assert completion.choices[0].message.model_extra["reasoning_content"]
    sent = _last_body(sim, "anthropic")
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048} and sent["max_tokens"] == 4000


def test_responses_reasoning_effort_reaches_an_anthropic_dialect_offering(oai, sim):
    oai.responses.create(
        model="claude-sonnet-4.5",
        input="Why is the sky blue?",
        reasoning={"effort": "high"},
        max_output_tokens=30000,
        extra_body=ONLY("anthropic"),
    )
    assert _last_body(sim, "anthropic")["thinking"] == {"type": "enabled", "budget_tokens": 24576}


# --- documents, parallel tool calls ------------------------------------------------------------


def test_an_anthropic_pdf_document_reaches_an_openai_dialect_offering_as_a_file_part(claude, sim):
    document = {
        "type": "document",
        "title": "a.pdf",
        "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
    }
    claude.messages.create(
        model="gpt-4.1-mini",
        max_tokens=50,
        messages=[{"role": "user", "content": [document, {"type": "text", "text": "Summarise it."}]}],
    )
    parts = _last_body(sim, "openai")["messages"][-1]["content"]
    assert parts[0] == {
        "type": "file",
        "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "a.pdf"},
    }


def test_a_chat_file_part_reaches_an_anthropic_dialect_offering_as_a_document(oai, sim):
    part = {"type": "file", "file": {"filename": "a.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}}
    oai.chat.completions.create(
        model="claude-sonnet-4.5",
        max_tokens=50,
        messages=[{"role": "user", "content": [part, {"type": "text", "text": "Summarise it."}]}],
        extra_body=ONLY("anthropic"),
    )
    block = _last_body(sim, "anthropic")["messages"][-1]["content"][0]
    assert block["type"] == "document" and block["source"]["data"] == PDF


def test_parallel_tool_calls_off_reaches_anthropic_and_back(oai, sim):
    tools = [{"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}]
    oai.chat.completions.create(
        model="claude-sonnet-4.5",
        max_tokens=50,
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,
        parallel_tool_calls=False,
        extra_body=ONLY("anthropic"),
    )
    assert _last_body(sim, "anthropic")["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


# --- refused, in the caller's shape, naming the feature -----------------------------------------


@pytest.mark.parametrize(
    ("extra", "param"),
    [({"n": 2}, "n"), ({"logprobs": True}, "logprobs"), ({"seed": 7}, "seed")],
)
def test_a_feature_the_messages_api_lacks_is_refused_naming_it(oai, sim, extra, param):
    with pytest.raises(openai.BadRequestError) as caught:
        oai.chat.completions.create(
            model="claude-sonnet-4.5",
            max_tokens=20,
            messages=[{"role": "user", "content": "hi"}],
            extra_body={**ONLY("anthropic"), **extra},
        )
    assert caught.value.code == "unsupported_parameter" and caught.value.param == param
    assert param in caught.value.message
    assert sim_requests(sim, "anthropic") == []  # never sent


def test_n_moves_the_route_to_an_offering_that_can_answer_it(oai):
    raw = oai.chat.completions.with_raw_response.create(
        model="claude-sonnet-4.5",
        max_tokens=20,
        n=2,
        messages=[{"role": "user", "content": "hi"}],
        extra_body=ONLY("anthropic", "openrouter"),
    )
    assert raw.headers["x-tokenway-provider"] == "openrouter"


def test_top_k_to_an_openai_dialect_offering_is_refused_in_the_anthropic_shape(claude):
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(
            model="gpt-4.1-mini",
            max_tokens=20,
            messages=[{"role": "user", "content": "hi"}],
            extra_body={"top_k": 5},  # this SDK version no longer names it
        )
    error = caught.value.body["error"]
    assert error["type"] == "invalid_request_error" and "top_k" in error["message"]


def test_tool_choice_naming_a_tool_not_offered_is_refused_by_both_dialects(oai, claude):
    tools = [{"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}]
    with pytest.raises(openai.BadRequestError) as caught:
        oai.chat.completions.create(
            model="gpt-4.1-mini",
            max_tokens=20,
            messages=[{"role": "user", "content": "hi"}],
            tools=tools,
            tool_choice={"type": "function", "function": {"name": "nope"}},
        )
    assert caught.value.param == "tool_choice" and "nope" in caught.value.message
    with pytest.raises(anthropic.BadRequestError) as refused:
        claude.messages.create(
            model="claude-sonnet-4.5",
            max_tokens=20,
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"name": "w", "input_schema": {"type": "object"}}],
            tool_choice={"type": "tool", "name": "nope"},
        )
    assert "nope" in refused.value.body["error"]["message"]


# --- response shapes -------------------------------------------------------------------------


def test_chat_answers_translated_from_anthropic_carry_a_null_refusal(oai):
    raw = oai.chat.completions.with_raw_response.create(
        model="claude-sonnet-4.5",
        max_tokens=20,
        messages=[{"role": "user", "content": "hi"}],
        extra_body=ONLY("anthropic"),
    )
    message = orjson.loads(raw.content)["choices"][0]["message"]
    assert "refusal" in message and message["refusal"] is None


def test_a_providers_own_400_is_its_message_not_its_json(claude):
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(
            model="claude-sonnet-4.5",
            max_tokens=2000,
            thinking={"type": "enabled", "budget_tokens": 500},
            messages=[{"role": "user", "content": "hi"}],
            extra_body=ONLY("anthropic"),
        )
    message = caught.value.body["error"]["message"]
    assert "budget_tokens" in message and "{" not in message


def test_responses_text_format_streamed_from_an_anthropic_dialect_offering_parses(oai):
    with oai.responses.stream(
        model="claude-sonnet-4.5",
        input="Weather in Paris as JSON.",
        text_format=Weather,
        max_output_tokens=300,
        extra_body=ONLY("anthropic"),
    ) as stream:
        final = stream.get_final_response()
    assert isinstance(final.output_parsed, Weather)


def test_anthropic_structured_output_reaches_an_openai_dialect_offering_as_response_format(claude, sim):
    schema = Weather.model_json_schema()
    message = claude.messages.create(
        model="gpt-4.1-mini",
        max_tokens=300,
        messages=[{"role": "user", "content": "Weather in Paris as JSON."}],
        extra_body={"output_format": {"type": "json_schema", "schema": schema}},
    )
    assert Weather.model_validate_json(message.content[0].text)
    assert _last_body(sim, "openai")["response_format"]["json_schema"]["schema"] == schema


def test_a_refusal_to_a_responses_caller_is_in_its_error_shape(oai):
    with pytest.raises(openai.BadRequestError) as caught:
        oai.responses.create(
            model="claude-sonnet-4.5",
            input="hi",
            tools=[{"type": "function", "name": "w", "parameters": {"type": "object"}}],
            tool_choice={"type": "function", "name": "nope"},
        )
    assert caught.value.param == "tool_choice" and "nope" in caught.value.message
