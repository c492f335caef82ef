"""A tenant's own provider URL (BYOK base_url): used for its calls, checked again at connect time."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import redis
import requests
from cryptography.fernet import Fernet

from contracts.env import DEV_CREDENTIAL_KEYS
from routing.upstream.byok_connect import GuardedResolver, RefusedAddress
from tests.routing import harness
from tests.routing.conftest import sim_requests
from tests.routing.harness import ServerThread, make_tenant

pytestmark = pytest.mark.cluster

MSG = [{"role": "user", "content": "hello"}]
ONLY_DEEPSEEK = {"only": ["deepseek"], "allow_fallbacks": False}


def _token(secret: str) -> str:
    return Fernet(DEV_CREDENTIAL_KEYS[0].encode()).encrypt(secret.encode()).decode()


def _chat(base_url: str, key: str, **extra):
    body = {"model": "deepseek-v3.2", "messages": MSG, "max_tokens": 20, **extra}
    return requests.post(f"{base_url}/v1/chat/completions", json=body, headers={"x-api-key": key}, timeout=20)


def _tenant_with_url(client: redis.Redis, url: str):
    return make_tenant(client, byok={"deepseek": _token("sk-tenant-own")}, byok_base_urls={"deepseek": url})


@pytest.fixture(scope="module")
def dev_gateway(gateway_server) -> Iterator[ServerThread]:  # the shared catalog is published by gateway_server
    from routing.app import make_gateway_app

    server = ServerThread(make_gateway_app(harness.test_config(allow_loopback_provider_urls=True)))
    yield server
    server.stop()


def test_the_tenants_url_is_called_with_the_tenants_key(dev_gateway, gateway, sim, redis_client):
    port = urlsplit(sim.base_url).port
    tenant = _tenant_with_url(redis_client, f"http://localhost:{port}/deepseek/v1")
    response = _chat(dev_gateway.base_url, tenant.key, provider=ONLY_DEEPSEEK)
    assert response.status_code == 200, response.text
    [received] = sim_requests(sim, "deepseek", 1)
    # The catalog's URL names 127.0.0.1; this call went to the tenant's host name instead.
    assert received["headers"]["host"] == f"localhost:{port}"
    assert received["headers"]["authorization"] == "Bearer sk-tenant-own"
    [event] = tenant.wait_events(1)
    assert event["byok"] is True and event["status"] == "ok"


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_a_private_address_is_refused_at_connect_time(gateway, sim, redis_client, host):
    """The production policy (no loopback): whether the name resolves there now or the URL names the
    address, nothing is sent, the caller reads which host was refused, and the shared offering stays healthy."""
    port = urlsplit(sim.base_url).port
    tenant = _tenant_with_url(redis_client, f"http://{host}:{port}/deepseek/v1")
    response = _chat(gateway.base_url, tenant.key, provider=ONLY_DEEPSEEK)
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "byok_url_refused"
    assert "loopback" in error["message"] and host.strip("[]") in error["message"]
    assert sim_requests(sim, "deepseek", 5) == []
    board = gateway.gateway.health
    assert all(board.get(o.offering_id).error_rate == 0.0 for o in gateway.gateway.catalog.by_id.values())


def test_a_failing_tenant_url_falls_back_to_the_platforms_offerings(gateway, sim, redis_client):
    """Without `allow_fallbacks: false` another provider of the model serves the call."""
    port = urlsplit(sim.base_url).port
    tenant = _tenant_with_url(redis_client, f"http://127.0.0.1:{port}/deepseek/v1")
    response = _chat(gateway.base_url, tenant.key, provider={"order": ["deepseek"]})
    assert response.status_code == 200, response.text
    assert response.headers["x-tokenway-provider"] != "deepseek"
    assert "+failover" in response.headers["x-tokenway-route"]


def test_the_resolver_hands_over_only_checked_addresses():
    async def resolve(allow_loopback: bool):
        resolver = GuardedResolver(allow_loopback=allow_loopback)
        try:
            return await resolver.resolve("localhost", 443)
        finally:
            await resolver.close()

    with pytest.raises(RefusedAddress, match="loopback"):
        asyncio.run(resolve(False))
    addresses = asyncio.run(resolve(True))
    assert addresses and all(a["host"] in {"127.0.0.1", "::1"} for a in addresses)


def test_log_lines_of_a_call_carry_its_request_id_as_json(dev_gateway, gateway, redis_client):
    """TOKENWAY_LOG_FORMAT=json: the gateway's log line about this call's failed connect names its id."""
    import io
    import json
    import logging
    import socket

    from contracts.jsonlog import JsonFormatter

    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    tenant = _tenant_with_url(redis_client, f"http://127.0.0.1:{port}/v1")
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("routing.failover")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        response = _chat(dev_gateway.base_url, tenant.key, provider=ONLY_DEEPSEEK)
    finally:
        logger.removeHandler(handler)
    assert response.status_code == 502
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    [line] = [entry for entry in lines if entry.get("request_id") == response.headers["x-request-id"]]
    assert line["logger"] == "routing.failover" and line["level"] == "info"
    assert "upstream failure" in line["message"]
    assert "Could not connect" in response.json()["error"]["message"]  # the caller reads no library text
