"""The gateway's Redis client on a real 3-master Redis Cluster (devtools.redis_cluster): slot routing
as the cluster computes it, redirects (MOVED, ASK) followed, scripts loaded on every master, a master
down failing only its own slots, and every script call of the gateway on one slot."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord, Limits
from contracts.snapshot import CatalogSnapshot
from devtools.redis_cluster import redis_cluster
from routing.failover.health import HealthBoard
from routing.failover.shared import sync_once as live_sync_once
from routing.handoff.replay import replay_once
from routing.handoff.spool import UsageSpool
from routing.hedging.budget import spend_hedge
from routing.limits.admission import admit, settle
from routing.limits.board import LimitBoard
from routing.limits.scripts import ADMISSION
from routing.limits.shared import sync_once as limits_sync_once
from routing.redis.client import is_cluster, redis_client
from routing.redis.cluster import ClusterRedis
from routing.redis.pipe import Arg, PipelinedRedis, RedisUnavailable
from routing.redis.slots import key_slot
from routing.state.keys import KeyCache
from routing.state.offerings import CatalogState
from routing.state.refresher import Refresher
from tests.routing.cluster_nodes import finish_migration, move_keys, move_slot, nodes, owner, shut_down, start_migration
from tests.routing.own_redis import OwnRedis


@pytest.fixture(scope="module")
def cluster_url() -> Iterator[str]:
    with redis_cluster(masters=3) as url:
        yield url


@pytest.fixture
async def client(cluster_url: str) -> AsyncIterator[ClusterRedis]:
    cluster = ClusterRedis(cluster_url)
    await cluster.connect()
    yield cluster
    await cluster.close()


def _commands(node: redis.Redis, name: str) -> int:
    stats: dict[str, Any] = node.info("commandstats")
    return int(stats.get(f"cmdstat_{name}", {}).get("calls", 0))


def test_a_node_whose_port_was_taken_after_the_check_is_started_on_another(monkeypatch):
    """The suite's own connections take local ports all the time: a node port taken between the check
    and redis-server's bind makes that node exit at once; the cluster starts it on another pair."""
    from devtools import redis_cluster as cluster_module

    ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    picked = [cluster_module._node_port() for _ in range(50)]
    assert all(port + cluster_module.BUS_OFFSET < ephemeral for port in picked)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))  # bound as an outgoing connection's local port is
        picks = iter([taken.getsockname()[1]])
        real = cluster_module._node_port
        monkeypatch.setattr(cluster_module, "_node_port", lambda: next(picks, None) or real())
        with redis_cluster(masters=1) as url:
            assert redis.Redis.from_url(url).ping()
            assert int(url.rsplit(":", 1)[1].split("/")[0]) != taken.getsockname()[1]


def test_slots_are_the_ones_the_cluster_computes(cluster_url):
    seed = nodes(cluster_url)[0].client
    keys = [f"k{i}" for i in range(100)] + [rk.tenant_available(t) for t in (1, 99, 12_345)] + rk.usage_streams(4)
    for key in keys:
        assert key_slot(key) == seed.execute_command("CLUSTER KEYSLOT", key), key


@pytest.mark.single_redis  # compares the cluster with the session's Redis, which must then be a single server
def test_the_gateway_picks_the_cluster_client_by_asking_the_server(cluster_url):
    server = OwnRedis()  # a single server of the test's own (the session's REDIS_URL may be a cluster)
    server.start()
    try:
        single = server.url
        assert is_cluster(cluster_url) and not is_cluster(single)
        assert type(redis_client(cluster_url, None)) is ClusterRedis
        assert type(redis_client(single, None)) is PipelinedRedis  # the single-server path is the plain client
        assert type(redis_client(single, True)) is ClusterRedis
        assert type(redis_client(cluster_url, False)) is PipelinedRedis
    finally:
        server.close()


async def test_commands_of_one_tick_land_on_the_node_of_their_key(client, cluster_url):
    keys = [f"spread:{i}" for i in range(60)]
    assert await asyncio.gather(*(client.submit("SET", key, key) for key in keys)) == [b"OK"] * 60
    by_port = {node.port: node for node in nodes(cluster_url)}
    for key in keys:
        _, node = owner(cluster_url, key)
        assert by_port[node.port].client.get(key) == key.encode()  # no redirect: the key is on its own node
    assert len({owner(cluster_url, key)[1].port for key in keys}) == 3


async def test_mget_over_several_slots_answers_in_order(client):
    await client.execute("SET", "mget:a", "1")
    await client.execute("SET", "mget:c", "3")
    assert len({key_slot(k) for k in ("mget:a", "mget:b", "mget:c")}) > 1
    assert await client.execute("MGET", "mget:a", "mget:b", "mget:c") == [b"1", None, b"3"]


async def test_script_load_reaches_every_master_and_noscript_falls_back(client, cluster_url):
    sha = await client.execute("SCRIPT", "LOAD", ADMISSION.source)
    assert [node.client.script_exists(sha.decode()) for node in nodes(cluster_url)] == [[True]] * 3
    for node in nodes(cluster_url):
        node.client.script_flush()
    record = KeyRecord(key_id=1, tenant_id=77, tenant_slug="t", name="k", prefix="tw_", key_limits=Limits())
    cluster = redis.RedisCluster.from_url(cluster_url)
    cluster.set(rk.tenant_available(77), 10_000)
    adm = await admit(client, record, tokens=10, hold_micros=1_000, lifetime_s=60)  # EVALSHA -> NOSCRIPT -> EVAL
    assert int(cluster.get(rk.tenant_available(77)) or 0) == 9_000
    assert await settle(client, adm, charge_micros=400, tokens_used=10) is True
    assert int(cluster.get(rk.tenant_available(77)) or 0) == 9_600
    cluster.close()


class RecordingCluster(ClusterRedis):
    """Keeps every script call it is given, then sends it on as usual."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.scripts: list[tuple[Arg, ...]] = []

    def submit(self, *args: Arg) -> asyncio.Future[Any]:
        if str(args[0]).upper() in ("EVAL", "EVALSHA"):
            self.scripts.append(args)
        return super().submit(*args)


@pytest.mark.parametrize("tenant_id", [3, 4_242, 987_654])
async def test_every_script_call_the_gateway_makes_has_its_keys_in_one_slot(cluster_url, tenant_id):
    recorder = RecordingCluster(cluster_url)
    await recorder.connect()
    cluster = redis.RedisCluster.from_url(cluster_url)
    cluster.set(rk.tenant_available(tenant_id), 1_000_000)
    limits = Limits(rpm=100, tpm=100_000, max_concurrency=5)
    record = KeyRecord(
        key_id=tenant_id * 10,
        tenant_id=tenant_id,
        tenant_slug="t",
        name="k",
        prefix="tw_",
        key_limits=limits,
        tenant_limits=limits,
        monthly_budget_micros=10**9,
    )
    adm = await admit(recorder, record, tokens=100, hold_micros=5_000, lifetime_s=60)
    assert await spend_hedge(recorder, adm, share=0.5, burst=1.0) is True
    assert await settle(recorder, adm, charge_micros=2_000, tokens_used=80) is True
    await live_sync_once(recorder, HealthBoard(failures_to_open=3, cooldown_s=15, clock=time.time))
    await limits_sync_once(recorder, LimitBoard(enabled=True))
    assert len(recorder.scripts) >= 5  # admission, hedge, settlement, live and limit sync (+ EVAL after NOSCRIPT)
    for call in recorder.scripts:
        keys = call[3 : 3 + int(call[2])]
        assert len({cluster.cluster_keyslot(str(key)) for key in keys}) == 1, call[: 3 + int(call[2])]
    assert int(cluster.get(rk.tenant_available(tenant_id)) or 0) == 1_000_000 - 2_000
    assert cluster.zcard(rk.tenant_hold_expiries(tenant_id)) == 0  # the hold was registered, then settled
    await recorder.close()
    cluster.close()


async def test_a_moved_slot_is_followed_and_the_map_refreshed(client, cluster_url):
    key = "moved:key"
    await client.execute("SET", key, "before")
    slot, source = owner(cluster_url, key)
    target = next(node for node in nodes(cluster_url) if node.port != source.port)
    move_slot(cluster_url, slot, source, target)
    assert await client.execute("GET", key) == b"before"  # MOVED from the old owner, retried on the new one
    await asyncio.sleep(0.1)  # the map refresh runs in the background
    source.client.config_resetstat()
    for _ in range(5):
        assert await client.submit("GET", key) == b"before"
    assert _commands(source.client, "get") == 0  # straight to the new owner now
    assert _commands(target.client, "get") >= 5


async def test_a_key_already_moved_during_a_migration_is_read_after_asking(client, cluster_url):
    key, fresh = "ask:{slot}:a", "ask:{slot}:b"
    await client.execute("SET", key, "moving")
    slot, source = owner(cluster_url, key)
    target = next(node for node in nodes(cluster_url) if node.port != source.port)
    start_migration(slot, source, target)
    move_keys(slot, source, target, [key.encode()])
    try:
        assert await client.execute("GET", key) == b"moving"  # ASK from the source, ASKING + GET on the target
        assert await client.submit("SET", fresh, "new") == b"OK"  # absent on the source: created on the target
        assert target.client.execute_command("CLUSTER COUNTKEYSINSLOT", slot) == 2  # both on the target
    finally:
        move_keys(slot, source, target)
        finish_migration(cluster_url, slot, target)
    assert await client.execute("GET", fresh) == b"new"


async def test_a_master_down_fails_its_own_slots_like_a_single_redis_down():
    with redis_cluster(masters=3) as url:
        client = ClusterRedis(url)
        await client.connect()
        down_key, up_key = (
            "down:x",
            next(f"up:{i}" for i in range(100) if owner(url, f"up:{i}")[1].port != owner(url, "down:x")[1].port),
        )
        assert await client.execute("SET", down_key, "1") == b"OK"
        shut_down(owner(url, down_key)[1])
        with pytest.raises(RedisUnavailable):
            await client.execute("GET", down_key)
        with pytest.raises(RedisUnavailable):  # no connect storm: the refused node fails fast for a while
            await client.submit("GET", down_key)
        assert await client.execute("SET", up_key, "2") == b"OK"  # the other masters still serve their slots
        assert client.connected
        await client.close()


async def test_a_snapshot_published_on_any_node_reaches_the_refresher_by_pubsub(client, cluster_url):
    """Polling once a minute here: only the pub/sub message, published on another node, can bring it."""
    cluster = redis.RedisCluster.from_url(cluster_url)
    cluster.set(rk.CATALOG_SNAPSHOT, CatalogSnapshot(version=1, generated_at=time.time(), offerings=()).to_json())
    catalog = CatalogState("beijing")
    refresher = Refresher(client, KeyCache(client, "pepper"), catalog, poll_s=60)
    await refresher.start()
    try:
        assert catalog.catalog is not None and catalog.catalog.version == 1
        listening = []
        for _ in range(100):  # PUBSUB NUMSUB counts the subscribers of that node only
            listening = [n for n in nodes(cluster_url) if n.client.pubsub_numsub(rk.SNAPSHOT_CHANNEL)[0][1] == 1]
            if listening:
                break
            await asyncio.sleep(0.02)
        assert len(listening) == 1
        other = next(node for node in nodes(cluster_url) if node.port != listening[0].port)
        cluster.set(rk.CATALOG_SNAPSHOT, CatalogSnapshot(version=2, generated_at=time.time(), offerings=()).to_json())
        cluster.incr(rk.CATALOG_VERSION)
        other.client.publish(rk.SNAPSHOT_CHANNEL, "catalog")  # on another node than the subscriber's
        for _ in range(100):
            if catalog.catalog.version == 2:
                break
            await asyncio.sleep(0.02)
        assert catalog.catalog.version == 2
    finally:
        await refresher.stop()
        cluster.close()


async def test_spooled_events_are_replayed_to_their_tenants_shard(client, cluster_url, tmp_path):
    spool = UsageSpool(tmp_path)
    lines = [b'{"request_id":"s4","tenant_id":4}', b'{"request_id":"s5","tenant_id":5}', b'{"request_id":"bad"}']
    for line in lines:
        spool.append(line)
    spool.flush()
    assert await replay_once(client, spool, shards=3) == 3
    cluster = redis.RedisCluster.from_url(cluster_url)
    on = {stream: [fields[b"e"] for _, fields in cluster.xrange(stream)] for stream in rk.usage_streams(3)}
    assert on == {rk.usage_stream(0): [lines[2]], rk.usage_stream(1): [lines[0]], rk.usage_stream(2): [lines[1]]}
    for stream in rk.usage_streams(3):
        cluster.delete(stream)
    cluster.close()


async def test_an_admission_while_its_tenants_slot_is_migrating_waits_the_move_out(client, cluster_url):
    tid = 31
    avail, holds = rk.tenant_available(tid), rk.tenant_holds(tid)
    cluster = redis.RedisCluster.from_url(cluster_url)
    cluster.set(avail, 10_000)
    cluster.hset(holds, "older", 1)
    slot, source = owner(cluster_url, rk.tenant_tag(tid))
    target = next(node for node in nodes(cluster_url) if node.port != source.port)
    start_migration(slot, source, target)
    move_keys(slot, source, target, [avail.encode()])  # the tenant's keys split between the two nodes
    asked = target.client.pipeline(transaction=False)  # where the source's ASK sends a call of both keys
    asked.execute_command("ASKING")
    asked.execute_command("EVAL", "return 1", 2, avail, holds)
    assert isinstance(asked.execute(raise_on_error=False)[1], redis.exceptions.TryAgainError)
    finisher = threading.Timer(
        0.08, lambda: (move_keys(slot, source, target), finish_migration(cluster_url, slot, target))
    )
    finisher.start()
    record = KeyRecord(key_id=310, tenant_id=tid, tenant_slug="t", name="k", prefix="tw_", key_limits=Limits())
    adm = await admit(client, record, tokens=10, hold_micros=1_000, lifetime_s=60)
    finisher.join()
    assert int(cluster.get(avail) or 0) == 9_000 and cluster.hget(holds, adm.hold_id) == b"1000"
    cluster.close()
