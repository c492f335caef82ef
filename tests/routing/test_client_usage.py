"""What the caller's own SDK reports as usage equals what the provider billed, across dialects.

The billing side is covered by tests/routing/test_usage.py (usage events against the simulator's
ground truth); here the official SDKs read the answer the caller gets: an Anthropic-SDK caller
served by an OpenAI-dialect provider (and the reverse) must see the provider's cache reads, in a
plain answer and in a stream's final message.
"""

from __future__ import annotations

import anthropic
import openai
import pytest

from tests.routing.conftest import sim_requests

LONG = "List every rule for holds, settlement, the reaper and reconciliation, with an example each. " * 60

OPENAI_DIALECT = [("openai", "gpt-4.1-mini"), ("deepseek", "deepseek-v4-flash"), ("moonshot", "kimi-k2")]


def _truths(sim, provider: str) -> list[dict[str, int]]:
    return [r["sim"]["true_usage"] for r in reversed(sim_requests(sim, provider, 2))]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(("provider", "model"), OPENAI_DIALECT)
def test_anthropic_sdk_sees_an_openai_dialect_providers_cache_reads(gateway, sim, tenant, provider, model, stream):
    client = anthropic.Anthropic(base_url=gateway.base_url, api_key=tenant.key, max_retries=0)
    kwargs = {"model": model, "max_tokens": 40, "messages": [{"role": "user", "content": LONG}],
              "extra_body": {"provider": {"only": [provider]}}}  # fmt: skip
    usages = []
    for _ in range(2):  # the second call reads the provider's prompt cache
        if stream:
            with client.messages.stream(**kwargs) as events:
                usages.append(events.get_final_message().usage)
        else:
            usages.append(client.messages.create(**kwargs).usage)
    truths = _truths(sim, provider)
    assert truths[1]["cache_read"] > 1000
    for usage, truth in zip(usages, truths, strict=True):
        assert usage.cache_read_input_tokens == truth["cache_read"]
        assert usage.input_tokens == truth["input_uncached"]  # Anthropic's input_tokens excludes cache reads
        assert usage.output_tokens == truth["output"]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_sdk_sees_an_anthropic_dialect_providers_cache_reads(gateway, sim, tenant, stream):
    client = openai.OpenAI(base_url=f"{gateway.base_url}/v1", api_key=tenant.key, max_retries=0)
    messages = [
        {"role": "system", "content": [{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]},
        {"role": "user", "content": "Which rule matters most?"},
    ]
    extra = {"provider": {"only": ["anthropic"]}}
    usages = []
    for _ in range(2):
        if stream:
            chunks = client.chat.completions.create(
                model="claude-sonnet-4.5",
                messages=messages,
                max_tokens=40,
                extra_body=extra,
                stream=True,
                stream_options={"include_usage": True},
            )
            usages.append([chunk.usage for chunk in chunks if chunk.usage][-1])
        else:
            usages.append(
                client.chat.completions.create(
                    model="claude-sonnet-4.5", messages=messages, max_tokens=40, extra_body=extra
                ).usage
            )
    truths = _truths(sim, "anthropic")
    assert truths[1]["cache_read"] > 1000
    for usage, truth in zip(usages, truths, strict=True):
        assert usage.prompt_tokens_details.cached_tokens == truth["cache_read"]
        written = truth["cache_write_5m"] + truth["cache_write_1h"]
        assert usage.prompt_tokens == truth["input_uncached"] + truth["cache_read"] + written  # OpenAI counts all
        assert usage.completion_tokens == truth["output"]
