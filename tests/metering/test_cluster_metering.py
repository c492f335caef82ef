"""Metering on a real 3-master Redis Cluster: sharded usage streams billed once, holds reaped per
tenant (and the old global index drained), billing lag per shard."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.db.models import Sum

from contracts import redis_keys as rk
from metering.consumer import group_ensure
from metering.holds import hold_place, holds_expired_count, holds_open_micros, holds_reap
from metering.lag import StreamLag, lag_total, usage_lag_by_stream
from metering.models import Journal, UsageRecord
from tests.factories import TenantFactory
from tests.metering.conftest import make_event, spawn
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
SHARDS = 3
STREAMS = rk.usage_streams(SHARDS)
CLAIM_MIN_IDLE_MS = 300  # the consumers' XAUTOCLAIM threshold in these runs (default 15 s)
EVENTS_PER_TENANT = 40


def _nodes(client: redis.Redis, keys: list[str]) -> set[str]:
    return {client.get_node_from_key(key).name for key in keys}  # type: ignore[attr-defined]


def _database_url() -> str:
    s = connection.settings_dict
    password = f":{s['PASSWORD']}" if s["PASSWORD"] else ""
    host, port = s["HOST"] or "127.0.0.1", s["PORT"] or "5432"
    if host.startswith("/"):  # a unix socket folder (the embedded server)
        return f"postgresql://{s['USER']}{password}@:{port}/{s['NAME']}?host={host}"
    return f"postgresql://{s['USER']}{password}@{host}:{port}/{s['NAME']}"


def _consume(name: str, env: dict[str, str], log: Path) -> int:
    process = spawn(
        [sys.executable, str(ROOT / "manage.py"), "consume_usage", "--until-idle", "--name", name], env=env, log=log
    )
    try:
        return process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()


def _pending(client: redis.Redis) -> dict[str, int]:
    return {stream: int(client.xpending(stream, rk.USAGE_GROUP)["pending"]) for stream in STREAMS}


def _all_pending_idle(client: redis.Redis) -> bool:
    for stream, count in _pending(client).items():
        entries = client.xpending_range(stream, rk.USAGE_GROUP, min="-", max="+", count=count) if count else []
        if any(int(entry["time_since_delivered"]) < CLAIM_MIN_IDLE_MS for entry in entries):
            return False
    return True


@pytest.mark.django_db(transaction=True)
def test_every_shard_reaches_the_ledger_once_when_a_consumer_dies_mid_way(tmp_path, cluster_client, redis_cluster_url):
    tenants = [TenantFactory(slug=f"shard-{n}") for n in range(SHARDS)]
    assert {rk.usage_shard(t.pk, SHARDS) for t in tenants} == set(range(SHARDS))
    assert len(_nodes(cluster_client, STREAMS)) > 1  # the shards really live on different masters
    events = {t.pk: [make_event(t.pk) for _ in range(EVENTS_PER_TENANT)] for t in tenants}
    pipe = cluster_client.pipeline(transaction=False)
    for tenant_id, tenant_events in events.items():
        stream = rk.usage_stream(rk.usage_shard(tenant_id, SHARDS))
        for event in [*tenant_events, tenant_events[0]]:  # the first one twice: a gateway's retry
            pipe.xadd(stream, {"e": event.to_json()})
    pipe.execute()
    env = {
        "DATABASE_URL": _database_url(),
        "REDIS_URL": redis_cluster_url,
        "TOKENWAY_REDIS_CLUSTER": "1",
        "TOKENWAY_USAGE_SHARDS": str(SHARDS),
        "TOKENWAY_CLAIM_MIN_IDLE_MS": str(CLAIM_MIN_IDLE_MS),
        # live console pushes and Celery need a single server: the session's plain one
        "CHANNELS_REDIS_URL": settings.CHANNELS_REDIS_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
    }
    log = tmp_path / "consumers.log"
    # c1 takes a batch from every shard and dies after committing its second one, before acking it.
    crash = {"TOKENWAY_CRASH_AT": "after_ledger", "TOKENWAY_CRASH_AFTER": "2"}
    assert _consume("c1", {**env, **crash}, log) == -signal.SIGKILL, log.read_text()
    left = _pending(cluster_client)
    assert sum(1 for count in left.values() if count) >= 2, left  # unacked entries on several shards
    assert 0 < UsageRecord.objects.count() < SHARDS * EVENTS_PER_TENANT

    # c2 (another name) claims what c1 left on each shard once it is idle long enough, and the rest.
    wait_until(lambda: _all_pending_idle(cluster_client), timeout=10, message="c1's entries never became claimable")
    assert _consume("c2", env, log) == 0, log.read_text()

    assert UsageRecord.objects.count() == SHARDS * EVENTS_PER_TENANT  # nothing lost, nothing twice
    assert Journal.objects.filter(kind="usage").count() == SHARDS * EVENTS_PER_TENANT
    for tenant_id, tenant_events in events.items():
        billed = UsageRecord.objects.filter(tenant_id=tenant_id).aggregate(s=Sum("charge_micros"))["s"]
        assert billed == sum(event.charge_micros for event in tenant_events)
    lags = usage_lag_by_stream(cluster_client, STREAMS)
    assert all(lag.undelivered == 0 and lag.pending == 0 for lag in lags.values()), lags


def test_the_reaper_releases_expired_holds_tenant_by_tenant_and_drains_the_old_index(cluster_client):
    tenants = [101, 202, 303]
    assert len(_nodes(cluster_client, [rk.tenant_hold_expiries(t) for t in tenants])) > 1
    for tenant_id in tenants:
        cluster_client.set(rk.tenant_available(tenant_id), 1_000)
        assert hold_place(cluster_client, tenant_id=tenant_id, hold_id="live", amount_micros=100, ttl_s=60)
        assert hold_place(cluster_client, tenant_id=tenant_id, hold_id="stranded", amount_micros=200, ttl_s=-1)
    # Before the upgrade a gateway indexed its holds in one global set: one still open, one settled since.
    cluster_client.set(rk.tenant_available(404), 700)
    cluster_client.hset(rk.tenant_holds(404), "old", 300)
    cluster_client.zadd(rk.HOLD_EXPIRIES, {"404:old": time.time() - 5, "101:gone": time.time() - 5})

    assert holds_reap(cluster_client, tenant_ids=[*tenants, 404]) == len(tenants) + 1
    assert not cluster_client.exists(rk.HOLD_EXPIRIES)  # drained once, then it is gone
    for tenant_id in tenants:
        assert int(cluster_client.get(rk.tenant_available(tenant_id))) == 900  # only the live hold is held
        assert holds_open_micros(cluster_client, tenant_id=tenant_id) == 100
        assert cluster_client.zrange(rk.tenant_hold_expiries(tenant_id), 0, -1) == [f"{tenant_id}:live".encode()]
    assert int(cluster_client.get(rk.tenant_available(404))) == 1_000
    assert cluster_client.zcard(rk.tenant_hold_expiries(404)) == 0
    assert holds_reap(cluster_client, tenant_ids=[*tenants, 404]) == 0
    assert holds_expired_count(cluster_client, tenant_ids=[*tenants, 404], before=time.time()) == 0
    assert holds_expired_count(cluster_client, tenant_ids=tenants, before=time.time() + 120) == len(tenants)


def test_billing_lag_is_reported_per_shard_and_in_total(cluster_client):
    group_ensure(cluster_client, STREAMS)
    for count, stream in zip((5, 3, 0), STREAMS, strict=True):
        for _ in range(count):
            cluster_client.xadd(stream, {"e": b"{}"})
    cluster_client.xreadgroup(rk.USAGE_GROUP, "slow", {STREAMS[0]: ">"}, count=2)  # taken, never acked

    lags = usage_lag_by_stream(cluster_client, STREAMS)
    assert (lags[STREAMS[0]].length, lags[STREAMS[0]].undelivered, lags[STREAMS[0]].pending) == (5, 3, 2)
    assert (lags[STREAMS[1]].length, lags[STREAMS[1]].undelivered, lags[STREAMS[1]].pending) == (3, 3, 0)
    assert lags[STREAMS[2]] == StreamLag(0, 0, 0, 0.0)
    assert all(lags[stream].oldest_unbilled_s >= 0 for stream in STREAMS[:2])
    total = lag_total(lags)
    assert (total.length, total.undelivered, total.pending) == (8, 6, 2)
    assert total.oldest_unbilled_s == max(lag.oldest_unbilled_s for lag in lags.values())
