"""The official OpenAI and Anthropic SDKs against the running stack with the demo key ``make run`` wrote."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def openai_client(stack):
    from openai import OpenAI

    return OpenAI(base_url=f"{stack.base_url}/v1", api_key=stack.key, max_retries=0, timeout=60)


@pytest.fixture(scope="module")
def anthropic_client(stack):
    from anthropic import Anthropic

    return Anthropic(base_url=stack.base_url, api_key=stack.key, max_retries=0, timeout=60)


def test_openai_sdk_chat_completion(openai_client):
    answer = openai_client.chat.completions.create(
        model="deepseek-v3.2", messages=[{"role": "user", "content": "Hi"}], max_tokens=64
    )
    assert answer.choices[0].message.content
    assert answer.usage is not None and answer.usage.completion_tokens > 0


def test_openai_sdk_stream(openai_client):
    stream = openai_client.chat.completions.create(
        model="deepseek-v3.2",
        messages=[{"role": "user", "content": "Hi"}],
        max_tokens=64,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text
    assert chunks[-1].usage is not None


def test_anthropic_sdk_messages(anthropic_client):
    message = anthropic_client.messages.create(
        model="claude-sonnet-4.5", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
    )
    assert message.content[0].text
    assert message.usage.output_tokens > 0
    assert message._request_id  # the Anthropic SDK reads `request-id`


def test_anthropic_sdk_stream(anthropic_client):
    with anthropic_client.messages.stream(
        model="claude-sonnet-4.5", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text
    assert final.usage.output_tokens > 0
