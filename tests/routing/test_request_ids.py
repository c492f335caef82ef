"""Each SDK finds the call's id where it looks: OpenAI's in ``x-request-id``, Anthropic's in ``request-id``;
the offering is named ``provider/model``. Success, stream and every error, 401 and 404 included."""

from __future__ import annotations

import anthropic
import openai
import pytest
import requests

from tests.routing.harness import make_tenant

MSG = [{"role": "user", "content": "Say hi"}]


def _same_id(headers) -> str:
    rid = headers["x-request-id"]
    assert rid.startswith("gen-") and headers["request-id"] == rid
    return rid


def test_openai_sdk_request_id_on_a_completion_and_a_stream(oai, tenant):
    completion = oai.chat.completions.create(model="gpt-4.1-mini", messages=MSG, max_tokens=20)
    assert completion._request_id and completion._request_id.startswith("gen-")
    raw = oai.chat.completions.with_raw_response.create(model="gpt-4.1-mini", messages=MSG, stream=True)
    assert raw.request_id == _same_id(raw.headers)
    assert raw.headers["x-tokenway-offering"] == "openai/gpt-4.1-mini"  # a stable name, not a database id
    list(raw.parse())
    events = tenant.wait_events(2)
    assert [e["request_id"] for e in events] == [completion._request_id, raw.request_id]


def test_anthropic_sdk_request_id_on_a_message_and_a_stream(claude, tenant):
    message = claude.messages.create(model="claude-haiku-4.5", max_tokens=20, messages=MSG)
    assert message._request_id and message._request_id.startswith("gen-")
    with claude.messages.stream(model="claude-haiku-4.5", max_tokens=20, messages=MSG) as stream:
        assert stream.get_final_text()
        streamed = stream.request_id
    assert streamed and streamed.startswith("gen-") and streamed != message._request_id
    events = tenant.wait_events(2)
    assert [e["request_id"] for e in events] == [message._request_id, streamed]


def test_both_sdks_read_the_id_of_an_error_401_404_and_402(gateway, redis_client):
    bad_oai = openai.OpenAI(base_url=f"{gateway.base_url}/v1", api_key="tw_test_nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as denied:
        bad_oai.chat.completions.create(model="gpt-4.1-mini", messages=MSG)
    assert denied.value.request_id and denied.value.request_id.startswith("gen-")
    poor = make_tenant(redis_client, balance=0)
    claude = anthropic.Anthropic(base_url=gateway.base_url, api_key=poor.key, max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as refused:
        claude.messages.create(model="claude-haiku-4.5", max_tokens=100, messages=MSG)
    assert refused.value.status_code == 402
    assert refused.value.request_id and refused.value.request_id.startswith("gen-")
    [event] = poor.wait_events(1)
    assert event["request_id"] == refused.value.request_id and event["status"] == "rejected"
    with pytest.raises(anthropic.NotFoundError) as missing:
        claude.messages.create(model="no-such-model", max_tokens=10, messages=MSG)
    assert missing.value.request_id and missing.value.request_id.startswith("gen-")
    unrouted = requests.post(f"{gateway.base_url}/v1/nothing-here", json={}, timeout=5)
    assert unrouted.status_code == 404
    _same_id(unrouted.headers)


def test_models_and_count_tokens_carry_both_ids(gateway, tenant):
    listed = requests.get(f"{gateway.base_url}/v1/models", headers={"x-api-key": tenant.key}, timeout=5)
    counted = requests.post(
        f"{gateway.base_url}/v1/messages/count_tokens",
        headers={"x-api-key": tenant.key},
        timeout=5,
        json={"model": "claude-haiku-4.5", "messages": MSG},
    )
    assert listed.status_code == counted.status_code == 200
    _same_id(listed.headers)
    _same_id(counted.headers)
