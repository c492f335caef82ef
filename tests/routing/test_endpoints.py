"""The SDKs through the gateway to the simulated providers: both dialects, streaming and not."""

from __future__ import annotations

import pytest
import requests as httpx

from tests.routing.conftest import sim_requests

pytestmark = pytest.mark.cluster

MODEL_OPENAI = "gpt-4.1-mini"  # one offering, OpenAI dialect
MODEL_ANTHROPIC = "claude-haiku-4.5"  # one offering, Anthropic dialect


def test_openai_sdk_non_streaming_returns_text_usage_cost_and_provenance(oai, tenant):
    raw = oai.chat.completions.with_raw_response.create(
        model=MODEL_OPENAI, messages=[{"role": "user", "content": "Say hi"}], max_tokens=50
    )
    completion = raw.parse()
    assert completion.choices[0].message.content
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    assert completion.usage.model_extra["cost"] > 0
    assert raw.headers["x-tokenway-provider"] == "openai"
    assert raw.headers["x-tokenway-offering"]
    assert raw.headers["x-tokenway-route"].startswith("balanced")
    request_id = raw.headers["x-request-id"]
    [event] = tenant.wait_events(1)
    assert event["request_id"] == request_id and event["status"] == "ok"
    assert event["tokens"]["output"] == completion.usage.completion_tokens
    assert tenant.client.get(f"tw:gen:{request_id}")


def test_openai_sdk_streaming_without_include_usage_gets_no_usage_chunk(oai, tenant):
    chunks = list(
        oai.chat.completions.create(model=MODEL_OPENAI, messages=[{"role": "user", "content": "Say hi"}], stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert all(c.usage is None for c in chunks)
    [event] = tenant.wait_events(1)
    assert event["usage_source"] == "provider" and event["tokens"]["output"] > 0


def test_openai_sdk_streaming_with_include_usage_gets_cost(oai):
    chunks = list(
        oai.chat.completions.create(
            model=MODEL_OPENAI,
            messages=[{"role": "user", "content": "Say hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[-1].usage is not None and chunks[-1].usage.model_extra["cost"] > 0


def test_anthropic_sdk_non_streaming(claude, tenant):
    message = claude.messages.create(
        model=MODEL_ANTHROPIC, max_tokens=100, messages=[{"role": "user", "content": "Say hi"}]
    )
    assert message.content[0].text
    assert message.usage.output_tokens > 0
    assert message.usage.model_extra["cost"] > 0


def test_anthropic_sdk_streaming(claude, tenant):
    with claude.messages.stream(
        model=MODEL_ANTHROPIC, max_tokens=100, messages=[{"role": "user", "content": "Say hi"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text and final.usage.output_tokens > 0
    [event] = tenant.wait_events(1)
    assert event["tokens"]["output"] == final.usage.output_tokens


def test_models_list_and_get_parse_in_both_sdks(oai, claude):
    ids = [m.id for m in oai.models.list()]
    assert MODEL_OPENAI in ids
    assert oai.models.retrieve(MODEL_OPENAI).id == MODEL_OPENAI
    assert MODEL_ANTHROPIC in [m.id for m in claude.models.list()]


def test_head_probes_answer_200(gateway):
    assert httpx.head(f"{gateway.base_url}/").status_code == 200
    assert httpx.head(f"{gateway.base_url}/api/hello").status_code == 200


def test_count_tokens(claude):
    result = claude.messages.count_tokens(model=MODEL_ANTHROPIC, messages=[{"role": "user", "content": "Hello there"}])
    assert result.input_tokens > 0


def test_messages_with_beta_query(gateway, tenant, sim):
    response = httpx.post(
        f"{gateway.base_url}/v1/messages?beta=true",
        headers={"x-api-key": tenant.key, "anthropic-version": "2023-06-01", "anthropic-beta": "foo-2025"},
        json={
            "model": MODEL_ANTHROPIC,
            "max_tokens": 20,
            "messages": [{"role": "user", "content": "hi"}],
            "thinking": {"type": "disabled"},
        },
    )
    assert response.status_code == 200, response.text
    [received] = sim_requests(sim, "anthropic", 1)
    assert received["headers"]["anthropic-beta"] == "foo-2025"
    assert "provider" not in received["json"]
