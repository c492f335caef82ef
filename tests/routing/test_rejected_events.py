"""After the key is known, every refusal leaves one ``rejected`` usage event: its status, error code,
zero tokens and money, no hold. An unknown key (401) belongs to no tenant and leaves none."""

from __future__ import annotations

import pytest
import requests

from contracts import redis_keys as rk
from contracts.keyrecord import Limits
from tests.routing.harness import make_tenant, usage_events
from tests.waiting import wait_until

pytestmark = pytest.mark.cluster

MSG = [{"role": "user", "content": "hi"}]
BODY = {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 5}


def _post(gateway, key, body=None, *, raw=None, path="/v1/chat/completions"):
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
    return requests.post(f"{gateway.base_url}{path}", json=body, data=raw, headers=headers, timeout=10)


def _assert_rejected(event, response, status, code, model):
    assert response.status_code == status and response.json()["error"]["code"] == code
    assert event["request_id"] == response.headers["x-request-id"] == response.headers["request-id"]
    assert (event["status"], event["http_status"], event["error_code"], event["model"]) == (
        "rejected",
        status,
        code,
        model,
    )
    assert event["charge_micros"] == event["cost_micros"] == event["hold_micros"] == 0
    assert event["hold_id"] is None and event["offering_id"] is None and set(event["tokens"].values()) == {0}


@pytest.mark.parametrize(
    ("setup", "body", "raw", "status", "code", "model"),
    [
        ({"balance": 0}, BODY, None, 402, "insufficient_balance", "gpt-4.1-mini"),
        ({"allowed_models": ("gpt-4.1",)}, BODY, None, 403, "forbidden_scope", "gpt-4.1-mini"),
        ({}, {**BODY, "model": "no-such-model"}, None, 404, "model_not_found", "no-such-model"),
        ({}, None, b"{not json", 400, "invalid_request", ""),
        ({}, {"model": "gpt-4.1-mini"}, None, 400, "invalid_request", "gpt-4.1-mini"),
    ],
)
def test_a_refusal_is_one_rejected_event_with_no_money(gateway, redis_client, setup, body, raw, status, code, model):
    t = make_tenant(redis_client, **setup)
    before = t.avail()
    response = _post(gateway, t.key, body, raw=raw)
    [event] = t.wait_events(1)
    _assert_rejected(event, response, status, code, model)
    assert t.avail() == before and redis_client.hlen(rk.tenant_holds(t.record.tenant_id)) == 0
    # /api/v1/generation answers before ingestion; on a Redis Cluster the copy lives on another master than the
    # stream, and the two writes of one pipelined hand-off may land in either order
    wait_until(
        lambda: redis_client.get(rk.generation(event["request_id"])),
        timeout=5,
        message="the generation copy of the rejected event",
    )


def test_rate_limited_call_is_rejected_after_the_admitted_ones(gateway, redis_client):
    t = make_tenant(redis_client, key_limits=Limits(rpm=1))
    assert _post(gateway, t.key, BODY).status_code == 200
    refused = _post(gateway, t.key, BODY)
    ok, rejected = t.wait_events(2)
    assert ok["status"] == "ok" and ok["charge_micros"] > 0
    _assert_rejected(rejected, refused, 429, "key_rate_limited", "gpt-4.1-mini")


def test_an_unknown_key_is_not_recorded(gateway, redis_client):
    response = _post(gateway, "tw_test_unknown", BODY)
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"
    assert response.headers["request-id"] == response.headers["x-request-id"]
    assert usage_events(redis_client) == []
