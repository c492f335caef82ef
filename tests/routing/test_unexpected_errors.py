"""An exception no handler expected (a bug) on /v1/* is the caller's JSON 500 in its own shape, with the
request id, no stack or internals, and counted on /metrics (tokenway_gateway_unexpected_errors_total).

The trigger is real: a key record this gateway cannot read, as when a newer platform writes a newer
KEY_RECORD_VERSION during a rolling deploy (contracts.keyrecord.KeyRecord.from_json raises)."""

from __future__ import annotations

import orjson
import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from contracts import redis_keys as rk
from contracts.keyrecord import KEY_RECORD_VERSION

METRIC = "tokenway_gateway_unexpected_errors_total"
HI = [{"role": "user", "content": "hi"}]
CALLS = [
    ("POST", "/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": HI}, "openai"),
    ("POST", "/v1/responses", {"model": "gpt-4.1-mini", "input": "hi"}, "openai"),
    ("POST", "/v1/messages", {"model": "claude-haiku-4.5", "max_tokens": 5, "messages": HI}, "anthropic"),
    ("POST", "/v1/messages/count_tokens", {"model": "claude-haiku-4.5", "messages": HI}, "anthropic"),
    ("GET", "/v1/models", None, "openai"),
]


def _unexpected(base_url: str, endpoint: str) -> float:
    text = requests.get(f"{base_url}/metrics", timeout=5).text
    samples = (s for family in text_string_to_metric_families(text) for s in family.samples)
    return sum(s.value for s in samples if s.name == METRIC and s.labels == {"endpoint": endpoint})


@pytest.mark.parametrize(("method", "path", "body", "shape"), CALLS)
def test_an_unexpected_exception_is_a_json_500_with_the_request_id_and_counted(
    gateway, tenant, redis_client, method, path, body, shape
):
    unreadable = {**orjson.loads(tenant.record.to_json()), "version": KEY_RECORD_VERSION + 1}
    redis_client.set(rk.key_record(tenant.key_hash), orjson.dumps(unreadable))
    before = _unexpected(gateway.base_url, path)
    response = requests.request(
        method, f"{gateway.base_url}{path}", json=body, headers={"x-api-key": tenant.key}, timeout=10
    )
    assert response.status_code == 500, response.text[:300]
    assert response.headers["content-type"] == "application/json"
    request_id = response.headers["x-request-id"]
    assert request_id.startswith("gen-") and response.headers["request-id"] == request_id
    payload = response.json()
    error = payload["error"]
    assert error["code"] == "internal_error" and request_id in error["message"]
    if shape == "anthropic":
        assert payload["type"] == "error" and error["type"] == "api_error"
    else:
        assert error["type"] == "server_error" and error["param"] is None
    for leak in ("Traceback", "ValueError", "version", ".py"):
        assert leak not in response.text
    assert _unexpected(gateway.base_url, path) == before + 1
