"""Every refusal in both dialects: status, stable code, and the SDK's exception type."""

from __future__ import annotations

import anthropic
import openai
import pytest
import requests

from contracts.keyrecord import Limits
from tests.routing.conftest import add_fault
from tests.routing.harness import make_tenant

MSG = [{"role": "user", "content": "hi"}]


def _post(gateway, path, key, body, **headers):
    auth = {"authorization": f"Bearer {key}"} if key else {}
    return requests.post(f"{gateway.base_url}{path}", json=body, headers={**auth, **headers}, timeout=20)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": MSG}),
        ("/v1/messages", {"model": "claude-haiku-4.5", "max_tokens": 10, "messages": MSG}),
    ],
)
def test_error_shapes_per_dialect(gateway, tenant, path, body):
    anthropic_dialect = path == "/v1/messages"

    def check(response, status, code):
        assert response.status_code == status, response.text
        data = response.json()
        if anthropic_dialect:
            assert (
                data["type"] == "error"
                and data["error"]["code"] == code
                and data["error"]["type"]
                and data["error"]["message"]
            )
        else:
            assert set(data["error"]) == {"message", "type", "param", "code"} and data["error"]["code"] == code
        return data

    check(_post(gateway, path, None, body), 401, "invalid_api_key")
    check(_post(gateway, path, "tw_live_" + "x" * 49, body), 401, "invalid_api_key")
    check(_post(gateway, path, tenant.key, {**body, "model": "no-such-model"}), 404, "model_not_found")
    check(_post(gateway, path, tenant.key, {k: v for k, v in body.items() if k != "messages"}), 400, "invalid_request")
    bad = requests.post(f"{gateway.base_url}{path}", data=b"{not json", headers={"x-api-key": tenant.key}, timeout=5)
    check(bad, 400, "invalid_request")
    huge = {**body, "messages": [{"role": "user", "content": "x" * (11 * 1024 * 1024)}]}
    check(_post(gateway, path, tenant.key, huge), 413, "request_too_large")
    check(_post(gateway, path, tenant.key, body, **{"x-tokenway-route": "fastest"}), 400, "invalid_route_mode")


def test_x_api_key_and_bearer_decide_identically(gateway, tenant):
    body = {"model": "gpt-4.1-mini", "messages": MSG}
    via_bearer = _post(gateway, "/v1/chat/completions", tenant.key, body)
    via_header = requests.post(
        f"{gateway.base_url}/v1/chat/completions", json=body, headers={"x-api-key": tenant.key}, timeout=10
    )
    assert via_bearer.status_code == via_header.status_code == 200


def test_scope_model_and_mode_are_403(gateway, redis_client):
    t = make_tenant(redis_client, allowed_models=("gpt-4.1",), allowed_route_modes=("cost",))
    client = openai.OpenAI(base_url=f"{gateway.base_url}/v1", api_key=t.key, max_retries=0)
    with pytest.raises(openai.PermissionDeniedError) as info:
        client.chat.completions.create(model="gpt-4.1-mini", messages=MSG)
    assert info.value.body["code"] == "forbidden_scope"
    with pytest.raises(openai.PermissionDeniedError):
        client.chat.completions.create(model="gpt-4.1", messages=MSG, extra_headers={"x-tokenway-route": "quality"})
    events = t.wait_events(2)  # recorded as rejected: no tokens, no money, nothing held
    assert [(e["status"], e["http_status"], e["error_code"]) for e in events] == [
        ("rejected", 403, "forbidden_scope")
    ] * 2
    assert all(e["charge_micros"] == 0 and e["hold_id"] is None for e in events)


def test_insufficient_balance_is_402_and_nothing_is_held(gateway, redis_client):
    t = make_tenant(redis_client, balance=5)
    client = anthropic.Anthropic(base_url=gateway.base_url, api_key=t.key, max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(model="claude-haiku-4.5", max_tokens=1000, messages=MSG)
    assert info.value.status_code == 402
    assert info.value.body["error"]["type"] == "billing_error"
    assert t.avail() == 5
    assert redis_client.hlen(f"tw:{{t{t.record.tenant_id}}}:holds") == 0


def test_missing_balance_counts_as_zero(gateway, redis_client):
    t = make_tenant(redis_client)
    redis_client.delete(f"tw:{{t{t.record.tenant_id}}}:avail")
    r = _post(gateway, "/v1/chat/completions", t.key, {"model": "gpt-4.1-mini", "messages": MSG})
    assert r.status_code == 402 and r.json()["error"]["code"] == "insufficient_balance"


def test_rpm_limit_is_429_with_retry_after_in_both_dialects(gateway, redis_client):
    t = make_tenant(redis_client, key_limits=Limits(rpm=2))
    body = {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 5}
    assert [_post(gateway, "/v1/chat/completions", t.key, body).status_code for _ in range(2)] == [200, 200]
    refused = _post(gateway, "/v1/chat/completions", t.key, body)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "key_rate_limited"
    assert 1 <= int(refused.headers["retry-after"]) <= 120
    client = anthropic.Anthropic(base_url=gateway.base_url, api_key=t.key, max_retries=0)
    with pytest.raises(anthropic.RateLimitError):
        client.messages.create(model="claude-haiku-4.5", max_tokens=5, messages=MSG)


def test_tenant_tpm_limit_counts_the_reservation(gateway, redis_client):
    t = make_tenant(redis_client, tenant_limits=Limits(tpm=500))
    ok = _post(gateway, "/v1/chat/completions", t.key, {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 100})
    assert ok.status_code == 200
    refused = _post(
        gateway, "/v1/chat/completions", t.key, {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 450}
    )
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "tenant_token_rate_limited"


def test_monthly_budget_is_402(gateway, redis_client):
    t = make_tenant(redis_client, monthly_budget_micros=1)
    r = _post(gateway, "/v1/chat/completions", t.key, {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 100})
    assert r.status_code == 402 and r.json()["error"]["code"] == "key_budget_exceeded"


@pytest.mark.parametrize(
    ("kind", "status", "openai_error"),
    [
        ("http_500", 502, openai.InternalServerError),
        ("http_529", 503, openai.InternalServerError),
        ("connection_refused", 502, openai.InternalServerError),
        ("stall_before_first_token", 504, openai.InternalServerError),
    ],
)
def test_upstream_failures_surface_as_5xx_when_no_fallback(gateway, sim, oai, tenant, kind, status, openai_error):
    add_fault(sim, provider="openai", kind=kind, stall_s=2000)
    with pytest.raises(openai_error) as info:
        oai.chat.completions.create(model="gpt-4.1-mini", messages=MSG, max_tokens=5)
    assert info.value.status_code == status
    events = tenant.wait_events(1)
    assert events[-1]["status"] == "upstream_error" and events[-1]["charge_micros"] == 0
    assert tenant.avail() == 10**9


def test_upstream_failure_in_anthropic_dialect(gateway, sim, claude):
    add_fault(sim, provider="anthropic", kind="http_503")
    with pytest.raises(anthropic.APIStatusError) as info:
        claude.messages.create(model="claude-haiku-4.5", max_tokens=5, messages=MSG)
    assert info.value.status_code == 503
    assert info.value.body["error"]["type"] == "overloaded_error"
