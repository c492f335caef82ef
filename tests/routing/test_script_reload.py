"""Redis forgets its Lua scripts (SCRIPT FLUSH, or a restart: scripts are not persisted): the next
EVALSHA answers NOSCRIPT and routing/limits/scripts.py loads the script again and runs it, also when
the EVALSHA was retried on a new connection after the restart. Real Redis servers throughout."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import redis
import requests

from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord, Limits
from routing.limits.admission import admit
from routing.limits.scripts import ADMISSION
from routing.redis.pipe import PipelinedRedis
from tests.routing.harness import make_tenant
from tests.routing.own_redis import OwnRedis
from tests.routing.test_redis_outage import CALLS, _post, republish
from tests.routing.test_redis_outage import own as own  # a fixture (re-exported for pytest)
from tests.waiting import wait_until

TID = 4343  # no database row: the scripts know tenants by id only
FUNDS = 1_000_000
HOLD = 10_000
RECORD = KeyRecord(key_id=7, tenant_id=TID, tenant_slug="acme", name="k", prefix="tw_test", key_limits=Limits(rpm=50))


@pytest.fixture
def server() -> Iterator[OwnRedis]:
    started = OwnRedis()
    started.start()
    try:
        yield started
    finally:
        started.close()


@pytest.fixture
async def pipe(server: OwnRedis) -> AsyncIterator[PipelinedRedis]:
    client = PipelinedRedis(server.url)
    await client.connect()
    yield client
    await client.close()


def _fund(server: OwnRedis) -> redis.Redis:
    client = redis.Redis.from_url(server.url)
    client.set(rk.tenant_available(TID), FUNDS)
    return client


async def _admitted(pipe: PipelinedRedis) -> None:
    await admit(pipe, RECORD, tokens=10, hold_micros=HOLD, lifetime_s=60.0)


def _cached(client: redis.Redis) -> bool:
    return client.script_exists(ADMISSION.sha) == [True]


async def test_a_flushed_script_cache_is_reloaded_and_the_call_admitted(server, pipe):
    client = _fund(server)
    await _admitted(pipe)
    client.script_flush()
    assert not _cached(client)
    await _admitted(pipe)
    assert _cached(client)  # loaded again: the next call is one EVALSHA
    assert int(client.get(rk.tenant_available(TID))) == FUNDS - 2 * HOLD
    client.close()


async def test_after_a_restart_the_retried_evalsha_reloads_the_script(server, pipe):
    """The connection the EVALSHA goes out on died with the old server; the retry meets the new,
    empty one (NOSCRIPT), which used to surface as a 500."""
    _fund(server).close()
    await _admitted(pipe)
    server.kill()
    server.start()  # empty: no scripts, no balances
    client = _fund(server)
    assert not _cached(client)
    await _admitted(pipe)
    assert _cached(client)
    assert int(client.get(rk.tenant_available(TID))) == FUNDS - HOLD
    client.close()


# --- through the real gateway -------------------------------------------------------------------


def test_a_flushed_script_cache_does_not_fail_a_call_through_the_gateway(gateway, tenant, redis_client):
    body = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}
    headers = {"authorization": f"Bearer {tenant.key}"}
    for _ in range(2):
        assert requests.post(f"{gateway.base_url}/v1/chat/completions", json=body, headers=headers, timeout=20).ok
        redis_client.script_flush()  # admission and settlement both meet NOSCRIPT next time
    answer = requests.post(f"{gateway.base_url}/v1/chat/completions", json=body, headers=headers, timeout=20)
    assert answer.status_code == 200, answer.text
    assert [e["status"] for e in tenant.wait_events(3)] == ["ok"] * 3


def test_calls_across_a_redis_restart_are_served_or_503_never_500(own, sim):
    """Restarted empty (scripts gone): each call meanwhile is a 503 with Retry-After (Redis away, or the
    state not yet republished) or served; once keys and balances are back, served. Never a 500."""
    server_redis, gateway, _ = own
    tenant = make_tenant(redis.Redis.from_url(server_redis.url))
    assert _post(gateway, tenant.key, *CALLS["openai"]).status_code == 200
    server_redis.kill()
    server_redis.start()
    republish(server_redis.url, tenant)
    seen: list[int] = []

    def served() -> bool:
        seen.append(_post(gateway, tenant.key, *CALLS["anthropic"]).status_code)
        return seen[-1] == 200

    wait_until(served, timeout=10, message="not served after the restart")
    assert set(seen) <= {200, 503}, seen
