"""Redis forgets its Lua scripts (SCRIPT FLUSH, or a restart: scripts are not persisted): the next
EVALSHA answers NOSCRIPT and routing/limits/scripts.py loads the script again and runs it, also when
the EVALSHA was retried on a new connection after the restart. Real Redis servers throughout."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import redis

from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord, Limits
from routing.limits.admission import admit
from routing.limits.scripts import ADMISSION
from routing.redis_pipe import PipelinedRedis
from tests.routing.own_redis import OwnRedis

TID = 4343  # no database row: the scripts know tenants by id only
FUNDS = 1_000_000
HOLD = 10_000
RECORD = KeyRecord(key_id=7, tenant_id=TID, tenant_slug="acme", name="k", prefix="tw_test", key_limits=Limits(rpm=50))


@pytest.fixture
def server() -> Iterator[OwnRedis]:
    own = OwnRedis()
    own.start()
    try:
        yield own
    finally:
        own.close()


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
