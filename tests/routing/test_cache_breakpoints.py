"""An OpenAI-SDK caller's cache breakpoints (``cache_control`` on content parts, as OpenRouter-style
clients send them) reach an Anthropic-dialect provider, so the second turn reads from its cache."""

from __future__ import annotations

import json

import openai

from routing.translate import request_o2a
from tests.routing.conftest import sim_requests

LONG = "You review pull requests for a payments team. " * 300  # well above the 1,024-token cache minimum


def test_parts_keep_their_breakpoints_and_plain_prompts_stay_strings():
    body = {
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "q", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
            },
        ]
    }
    anth = request_o2a.request(body, upstream_model="u")
    assert anth["system"] == [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}]
    assert anth["messages"][0]["content"] == [
        {"type": "text", "text": "q", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    plain = request_o2a.request(
        {
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                {"role": "system", "content": "c"},
                {"role": "user", "content": "q"},
            ]
        },
        upstream_model="u",
    )
    assert plain["system"] == "a\nb\n\nc"


def test_the_second_turn_reads_the_providers_cache(gateway, tenant, sim):
    client = openai.OpenAI(base_url=f"{gateway.base_url}/v1", api_key=tenant.key, max_retries=0)
    messages = [
        {"role": "system", "content": [{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]},
        {"role": "user", "content": "Is this diff safe to merge?"},
    ]
    extra = {"provider": {"only": ["anthropic"]}}
    first = client.chat.completions.create(
        model="claude-sonnet-4.5", messages=messages, max_tokens=16, extra_body=extra
    )
    [received] = sim_requests(sim, "anthropic", 1)
    assert json.loads(received["body"])["system"][0]["cache_control"] == {"type": "ephemeral"}
    second = client.chat.completions.create(
        model="claude-sonnet-4.5", messages=messages, max_tokens=16, extra_body=extra
    )
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    assert second.usage.prompt_tokens_details.cached_tokens > 1000
