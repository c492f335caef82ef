"""The provider URL table at connect time (tests/contracts/url_spellings.py), production policy:

- every refused spelling is refused by the gateway's check of the tenant's URL before any call;
- a public-looking name whose DNS answers an inside address (DNS rebinding) is refused by the
  connect-time resolver, through a real aiohttp session (the resolver's ``inner`` is the DNS seam);
- through the real gateway and simulator, the issue's spellings and a port off the allow-list reach
  nothing, and the caller reads ``byok_url_refused``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
import redis
import requests
from aiohttp.abc import AbstractResolver, ResolveResult
from cryptography.fernet import Fernet

from contracts.env import DEV_CREDENTIAL_KEYS
from routing.http.errors import UpstreamFailure
from routing.upstream.byok_connect import GuardedResolver, RefusedAddress, checked_url, make_byok_session
from routing.upstream.classify import from_exception
from tests.contracts import url_spellings as table
from tests.routing import harness
from tests.routing.conftest import sim_requests
from tests.routing.harness import ServerThread, make_tenant

MSG = [{"role": "user", "content": "hello"}]
ONLY_DEEPSEEK = {"only": ["deepseek"], "allow_fallbacks": False}


class FixedDns(AbstractResolver):
    """DNS that answers ``addresses`` for every name (what a rebinding attacker's server does)."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = addresses
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        return [_answer(host, address, port) for address in self.addresses]

    async def close(self) -> None:
        return None


def _answer(host: str, address: str, port: int) -> ResolveResult:
    family = socket.AF_INET6 if ipaddress.ip_address(address).version == 6 else socket.AF_INET
    return ResolveResult(hostname=host, host=address, port=port, family=family, proto=0, flags=socket.AI_NUMERICHOST)


def _refusal_of(url: str) -> UpstreamFailure | None:
    try:
        checked_url(url, allow_loopback=False, allowed_ports=table.PRODUCTION_PORTS)
    except UpstreamFailure as failure:
        return failure
    return None


def test_every_refused_spelling_is_refused_before_the_call():
    let_through = [url for url in table.REFUSED if _refusal_of(url) is None]
    assert let_through == []
    assert {_refusal_of(url).code for url in table.REFUSED} == {"byok_url_refused"}
    assert [url for url in table.ACCEPTED if _refusal_of(url) is not None] == []


async def _connect(dns: FixedDns) -> BaseException:
    session = make_byok_session(connect_timeout_s=2, allow_loopback=False, dns=dns)
    try:
        async with session.get(f"https://{table.PUBLIC_LOOKING_NAME}/v1/models"):
            raise AssertionError("connected")
    except aiohttp.ClientConnectorError as exc:
        return exc
    finally:
        await session.close()


async def test_a_public_looking_name_answering_an_inside_address_is_never_connected():
    connected = []
    for address in table.REFUSED_ANSWERS:
        dns = FixedDns(address)
        error = await _connect(dns)
        if not (isinstance(error.os_error, RefusedAddress) and dns.asked == [table.PUBLIC_LOOKING_NAME]):
            connected.append(address)
        failure = from_exception(error)
        assert failure.code == "byok_url_refused" and table.PUBLIC_LOOKING_NAME in failure.message
        assert address not in failure.message  # the caller reads which host, never the address
    assert connected == []


async def test_one_inside_answer_among_public_ones_refuses_the_name():
    resolver = GuardedResolver(allow_loopback=False, inner=FixedDns("8.8.8.8", "64:ff9b::a9fe:a9fe"))
    with pytest.raises(RefusedAddress, match="metadata"):
        await resolver.resolve(table.PUBLIC_LOOKING_NAME, 443)
    public = GuardedResolver(allow_loopback=False, inner=FixedDns(*table.ACCEPTED_ADDRESSES))
    assert [r["host"] for r in await public.resolve(table.PUBLIC_LOOKING_NAME, 443)] == table.ACCEPTED_ADDRESSES


# --- through the real gateway and simulator -------------------------------------------------------


def _token(secret: str) -> str:
    return Fernet(DEV_CREDENTIAL_KEYS[0].encode()).encrypt(secret.encode()).decode()


def _chat(base_url: str, key: str) -> requests.Response:
    body: dict[str, Any] = {"model": "deepseek-v3.2", "messages": MSG, "max_tokens": 20, "provider": ONLY_DEEPSEEK}
    return requests.post(f"{base_url}/v1/chat/completions", json=body, headers={"x-api-key": key}, timeout=20)


def _tenant_with_url(client: redis.Redis, url: str):
    return make_tenant(client, byok={"deepseek": _token("sk-tenant-own")}, byok_base_urls={"deepseek": url})


@pytest.fixture(scope="module")
def ported_gateway(gateway_server) -> Iterator[ServerThread]:
    """Loopback allowed (the simulator listens there) but production's ports: 80 and 443 only."""
    from routing.app import make_gateway_app

    config = harness.test_config(allow_loopback_provider_urls=True, byok_allowed_ports=table.PRODUCTION_PORTS)
    server = ServerThread(make_gateway_app(config))
    yield server
    server.stop()


REPORTED = ["[64:ff9b::7f00:1]", "[64:ff9b::a9fe:a9fe]", "[2002:7f00:1::]", "[::127.0.0.1]", "[::ffff:0:7f00:1]",
            "2130706433", "127.1", "0x7f.0.0.1", "localhost.", "192.0.0.192"]  # fmt: skip


@pytest.mark.adversarial
@pytest.mark.parametrize("host", REPORTED)
def test_the_reported_spellings_reach_nothing_through_the_gateway(gateway, sim, redis_client, host):
    port = urlsplit(sim.base_url).port
    tenant = _tenant_with_url(redis_client, f"http://{host}:{port}/deepseek/v1")
    response = _chat(gateway.base_url, tenant.key)
    assert response.status_code == 502, response.text
    assert response.json()["error"]["code"] == "byok_url_refused"
    assert sim_requests(sim, "deepseek", 5) == []
    [event] = tenant.wait_events(1)
    assert event["status"] != "ok" and event["cost_micros"] == 0


@pytest.mark.adversarial
def test_a_port_off_the_allow_list_reaches_nothing_at_connect(ported_gateway, gateway, sim, redis_client):
    """Saved before the rule (or written past the API): the gateway refuses it all the same."""
    port = urlsplit(sim.base_url).port
    tenant = _tenant_with_url(redis_client, f"http://localhost:{port}/deepseek/v1")
    response = _chat(ported_gateway.base_url, tenant.key)
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert error["code"] == "byok_url_refused" and f"port {port} is not allowed" in error["message"]
    assert sim_requests(sim, "deepseek", 5) == []
