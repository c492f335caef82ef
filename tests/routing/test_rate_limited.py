"""Provider rate limits stay rate limits: when every candidate answers 429, or every one is cooling
down after a 429, the caller gets 429 with Retry-After in its own wire format, so the official SDKs
raise RateLimitError (and back off) instead of treating it as an outage (503). Real gateway, real
simulated providers, the official ``openai`` and ``anthropic`` clients."""

from __future__ import annotations

import anthropic
import openai
import pytest

from tests.routing.conftest import add_fault, sim_requests
from tests.waiting import wait_until

pytestmark = pytest.mark.adversarial

MSG = [{"role": "user", "content": "Say hello."}]
GPT_PROVIDERS = ("openai", "openrouter")  # every offering of gpt-4.1 in the fleet's catalog


def _unchanged(tenant, before: int) -> None:
    wait_until(lambda: tenant.avail() == before, timeout=3, message="the refused call's hold was not given back")


def test_every_provider_answering_429_is_a_rate_limit_error_for_the_openai_sdk(gateway, sim, oai, tenant):
    for provider in GPT_PROVIDERS:
        add_fault(sim, provider=provider, kind="http_429", count=1)
    before = tenant.avail()
    with pytest.raises(openai.RateLimitError) as info:
        oai.chat.completions.create(model="gpt-4.1", messages=MSG, max_tokens=20)
    response = info.value.response
    assert response.status_code == 429 and int(response.headers["retry-after"]) >= 1
    assert info.value.body["code"] == "upstream_rate_limited"
    assert {p: len(sim_requests(sim, p)) for p in GPT_PROVIDERS} == {"openai": 1, "openrouter": 1}
    # Within Retry-After both are cooling down for that rate limit: still 429, and nothing is sent.
    with pytest.raises(openai.RateLimitError) as again:
        oai.chat.completions.create(model="gpt-4.1", messages=MSG, max_tokens=20, stream=True)
    assert int(again.value.response.headers["retry-after"]) >= 1
    assert {p: len(sim_requests(sim, p)) for p in GPT_PROVIDERS} == {"openai": 1, "openrouter": 1}
    _unchanged(tenant, before)
    tried, cooling = tenant.wait_events(2)
    assert (tried["http_status"], tried["error_code"], tried["attempts"]) == (429, "upstream_rate_limited", 2)
    assert (cooling["http_status"], cooling["error_code"]) == (429, "upstream_rate_limited")
    assert tried["charge_micros"] == cooling["charge_micros"] == 0


def test_a_429_from_the_only_provider_is_a_rate_limit_error_for_the_anthropic_sdk(gateway, sim, claude, tenant):
    add_fault(sim, provider="anthropic", kind="http_429", count=1)
    before = tenant.avail()
    with pytest.raises(anthropic.RateLimitError) as info:
        claude.messages.create(model="claude-haiku-4.5", max_tokens=20, messages=MSG)
    response = info.value.response
    assert response.status_code == 429 and int(response.headers["retry-after"]) >= 1
    assert info.value.body["type"] == "error" and info.value.body["error"]["type"] == "rate_limit_error"
    with pytest.raises(anthropic.RateLimitError):  # cooling down for its rate limit: not tried again
        claude.messages.create(model="claude-haiku-4.5", max_tokens=20, messages=MSG)
    assert len(sim_requests(sim, "anthropic")) == 1
    _unchanged(tenant, before)


def test_a_rate_limit_and_a_failure_together_stay_an_outage(gateway, sim, oai):
    """Not every candidate is rate limited: the provider error it ends on, as before (here 502)."""
    add_fault(sim, provider="openai", kind="http_429", count=1)
    add_fault(sim, provider="openrouter", kind="http_500", count=1)
    with pytest.raises(openai.APIStatusError) as info:
        oai.chat.completions.create(
            model="gpt-4.1", messages=MSG, max_tokens=20, extra_body={"provider": {"order": list(GPT_PROVIDERS)}}
        )
    assert info.value.status_code == 502 and not isinstance(info.value, openai.RateLimitError)


def test_after_retry_after_the_call_is_served(gateway, sim, oai):
    add_fault(sim, provider="openai", kind="http_429", count=1)
    add_fault(sim, provider="openrouter", kind="http_429", count=1)
    with pytest.raises(openai.RateLimitError):
        oai.chat.completions.create(model="gpt-4.1", messages=MSG, max_tokens=20)
    board, offerings = gateway.gateway.health, gateway.gateway.catalog.by_model["gpt-4.1"]
    wait_until(lambda: any(board.available(o.offering_id) for o in offerings), timeout=5, message="still cooling")
    assert oai.chat.completions.create(model="gpt-4.1", messages=MSG, max_tokens=20).choices[0].message.content
