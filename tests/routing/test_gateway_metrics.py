"""GET /metrics of a gateway process, read as a Prometheus scraper reads it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.routing import harness
from tests.routing.harness import ServerThread
from tests.waiting import wait_until

MSG = [{"role": "user", "content": "hello"}]


def _scrape(base_url: str, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = requests.get(f"{base_url}/metrics", headers=headers, timeout=5)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def _count(figures, name: str, **labels: str) -> float:
    return figures.get((name, tuple(sorted(labels.items()))), 0.0)


def test_calls_are_counted_by_endpoint_and_status(gateway, tenant):
    """Also with the platform's figures registered in this process (they read the database, which the
    gateway's event loop must never do): the gateway's page runs only its own collectors."""
    import tokenway.metrics  # noqa: F401

    before = _scrape(gateway.base_url)
    body = {"model": "deepseek-v3.2", "messages": MSG, "max_tokens": 10}
    ok = requests.post(
        f"{gateway.base_url}/v1/chat/completions", json=body, headers={"x-api-key": tenant.key}, timeout=20
    )
    assert ok.status_code == 200
    unauthorised = requests.post(f"{gateway.base_url}/v1/messages", json=body, timeout=5)
    assert unauthorised.status_code == 401
    assert requests.get(f"{gateway.base_url}/v1/made-up/{'x' * 40}", timeout=5).status_code == 404
    chat = {"endpoint": "/v1/chat/completions", "status": "200"}
    expected = _count(before, "tokenway_gateway_requests_total", **chat) + 1
    # A call is counted when its handler ends, which is after its accounting, not at the last byte.
    wait_until(
        lambda: _count(_scrape(gateway.base_url), "tokenway_gateway_requests_total", **chat) >= expected,
        timeout=5,
        message="the call was not counted",
    )
    after = _scrape(gateway.base_url)
    assert _count(after, "tokenway_gateway_requests_total", **chat) == expected
    messages = {"endpoint": "/v1/messages", "status": "401"}
    assert _count(after, "tokenway_gateway_requests_total", **messages) >= 1
    # A made-up path is "other": callers cannot create new series.
    assert _count(after, "tokenway_gateway_requests_total", endpoint="other", status="404") >= 1
    assert not any("made-up" in str(labels) for _, labels in after)
    duration = _count(after, "tokenway_gateway_request_duration_seconds_count", endpoint="/v1/chat/completions")
    assert duration >= 1
    provider = ok.headers["x-tokenway-offering"]
    assert _count(after, "tokenway_gateway_breaker_open", offering=provider) == 0
    assert _count(after, "tokenway_gateway_live_ttft_seconds", offering=provider) > 0
    assert _count(after, "tokenway_gateway_fd_limit") > 0
    provider_name = ok.headers["x-tokenway-provider"]
    assert _count(after, "tokenway_gateway_ttft_seconds_count", provider=provider_name) >= 1


def test_upstream_failures_are_counted_by_provider_and_kind(gateway, tenant, sim):
    from tests.routing.conftest import add_fault

    add_fault(sim, provider="deepseek", kind="http_500", count=1)
    before = _scrape(gateway.base_url)
    body = {"model": "deepseek-v3.2", "messages": MSG, "max_tokens": 10, "provider": {"order": ["deepseek"]}}
    ok = requests.post(
        f"{gateway.base_url}/v1/chat/completions", json=body, headers={"x-api-key": tenant.key}, timeout=20
    )
    assert ok.status_code == 200 and "+failover" in ok.headers["x-tokenway-route"]
    after = _scrape(gateway.base_url)
    labels = {"provider": "deepseek", "kind": "http_5xx"}
    assert _count(after, "tokenway_gateway_upstream_failures_total", **labels) == (
        _count(before, "tokenway_gateway_upstream_failures_total", **labels) + 1
    )


@pytest.fixture(scope="module")
def token_gateway(gateway_server) -> Iterator[ServerThread]:
    from routing.app import make_gateway_app

    server = ServerThread(make_gateway_app(harness.test_config(metrics_token="scrape-" + "t" * 24)))
    yield server
    server.stop()


def test_with_a_token_only_the_bearer_may_read(token_gateway):
    assert requests.get(f"{token_gateway.base_url}/metrics", timeout=5).status_code == 403
    wrong = requests.get(f"{token_gateway.base_url}/metrics", headers={"authorization": "Bearer nope"}, timeout=5)
    assert wrong.status_code == 403 and b"tokenway_" not in wrong.content
    assert _scrape(token_gateway.base_url, authorization="Bearer scrape-" + "t" * 24)
