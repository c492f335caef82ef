"""Usage per provider dialect against the simulator's ground truth; cost in micro-units."""

from __future__ import annotations

import pytest
import requests

from contracts.usage import Prices, Tokens, cost_micros
from tests.routing.conftest import sim_requests

pytestmark = [pytest.mark.cluster, pytest.mark.local_servers]

LONG = "Summarise the ledger rules for holds, settlement, the reaper and reconciliation. " * 60  # ~1.2k tokens

CASES = [
    ("deepseek", "deepseek-v4-flash"),  # prompt_cache_hit_tokens
    ("moonshot", "kimi-k2"),  # top-level cached_tokens
    ("zhipu", "glm-4.5-air"),  # prompt_tokens_details
    ("dashscope", "qwen-plus"),  # prompt_tokens_details (qwen)
    ("openai", "gpt-4.1-mini"),
    ("anthropic", "claude-haiku-4.5"),  # on top of input, cumulative in streams
    ("deepseek-anthropic", "deepseek-v4-flash"),
]


def _call(gateway, tenant, dialect, model, provider, stream):
    body = {"model": model, "max_tokens": 60, "stream": stream, "provider": {"only": [provider]},
            "messages": [{"role": "user", "content": LONG}]}  # fmt: skip
    path = "/v1/messages" if dialect == "anthropic" else "/v1/chat/completions"
    response = requests.post(f"{gateway.base_url}{path}", json=body, headers={"x-api-key": tenant.key}, timeout=20)
    assert response.status_code == 200, response.text
    return response


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
@pytest.mark.parametrize(("provider", "model"), CASES)
def test_usage_matches_the_providers_ground_truth(gateway, sim, tenant, provider, model, dialect, stream):
    for _ in range(2):  # the second call reads the provider's prompt cache
        _call(gateway, tenant, dialect, model, provider, stream)
    events = tenant.wait_events(2)
    truths = [r["sim"]["true_usage"] for r in reversed(sim_requests(sim, provider, 2))]
    assert truths[1]["cache_read"] > 0 or provider == "anthropic"  # first-party caches explicit markers only
    for event, truth in zip(events, truths, strict=True):
        tokens = event["tokens"]
        for name in ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning"):
            assert tokens[name] == truth[name], (name, tokens, truth)
        assert event["usage_source"] == "provider" and event["flags"] == []
        prices = Prices(**event["prices"])
        assert event["cost_micros"] == cost_micros(Tokens(**tokens), prices)


def test_include_usage_is_injected_upstream_and_the_usage_chunk_hidden_from_the_client(gateway, sim, tenant):
    body = {"model": "gpt-4.1-mini", "max_tokens": 30, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    response = requests.post(
        f"{gateway.base_url}/v1/chat/completions", json=body, headers={"x-api-key": tenant.key}, timeout=20
    )
    assert response.status_code == 200
    [received] = sim_requests(sim, "openai", 1)
    assert received["json"]["stream_options"] == {"include_usage": True}  # injected
    assert b'"usage":{' not in response.content  # and stripped, since the client did not ask


def test_usage_event_serialisation_matches_the_contract():
    import dataclasses

    import orjson

    from contracts.usage import UsageEvent

    event = UsageEvent(
        request_id="r",
        tenant_id=1,
        key_id=2,
        model="m",
        offering_id=3,
        provider="p",
        region="beijing",
        route_mode="cost",
        route_reason="cost:score",
        tokens=Tokens(1, 2, 3, 4, 5, 1),
        usage_source="provider",
        prices=Prices(1, 2, 3),
        cost_micros=9,
        charge_micros=10,
        status="ok",
        http_status=200,
        stream=True,
        flags=("clamped_negative",),
    )
    # The wire bytes are those of the plain-dict form metering has always parsed.
    assert event.to_json() == orjson.dumps(dataclasses.asdict(event))
    assert UsageEvent.from_json(event.to_json()) == event
