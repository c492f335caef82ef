"""What the platform publishes for gateways, on a real 3-master Redis Cluster: key records, the catalog
and statistics snapshots with their versions, and balance counters."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import redis
from django.db import connection

from apikeys.services import api_key_revoke
from contracts import redis_keys
from contracts.snapshot import CatalogSnapshot, StatsSnapshot
from evaluation.services.snapshot import snapshot_publish
from foundation.redis_client import get_redis
from outbox.models import OutboxRow, Topic
from publishing.catalog_snapshot import publish_catalog
from publishing.drain import outbox_drain
from publishing.keys import publish_all_keys
from tenants.services import tenant_update
from tests.factories import TenantFactory, issue_key

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def on_cluster(cluster_client: redis.Redis, redis_cluster_url: str, settings) -> Iterator[redis.Redis]:
    """The platform's client (get_redis) pointed at the cluster for this test."""
    settings.REDIS_URL, settings.TOKENWAY_REDIS_CLUSTER = redis_cluster_url, "1"
    get_redis.cache_clear()
    yield cluster_client
    get_redis.cache_clear()


def test_key_records_of_many_slots_are_published_and_revoked_with_one_version_bump_each(on_cluster):
    tenants = [TenantFactory(slug=f"c{n}") for n in range(3)]
    keys = [issue_key(tenant)[0] for tenant in tenants for _ in range(3)]
    records = [redis_keys.key_record(key.key_hash) for key in keys]
    assert isinstance(get_redis(), redis.RedisCluster)
    assert len({on_cluster.get_node_from_key(name).name for name in records}) > 1
    on_cluster.flushdb()
    pubsub = on_cluster.pubsub()
    pubsub.subscribe(redis_keys.KEYS_CHANNEL)
    assert publish_all_keys() == len(keys)
    assert all(on_cluster.exists(name) for name in records)
    version = int(on_cluster.get(redis_keys.KEYS_VERSION))
    api_key_revoke(key=keys[4])
    assert not on_cluster.exists(records[4])
    assert int(on_cluster.get(redis_keys.KEYS_VERSION)) == version + 1
    heard = set()
    while message := pubsub.get_message(timeout=1):
        if message["type"] == "message":
            heard.add(message["data"])
    assert heard == {b"*", *(key.key_hash.encode() for key in keys)}  # every record, then the revoked one again
    pubsub.close()


def test_the_catalog_document_and_its_version_key_agree_after_concurrent_publishes(on_cluster, catalog_fixture):
    errors: list[BaseException] = []

    def publisher() -> None:
        try:
            for _ in range(5):
                publish_catalog()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()  # this thread's own database connection

    threads = [threading.Thread(target=publisher) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    stored = CatalogSnapshot.from_json(on_cluster.get(redis_keys.CATALOG_SNAPSHOT))
    assert stored.version == int(on_cluster.get(redis_keys.CATALOG_VERSION)) >= 20
    assert stored.offerings  # the fixture catalog, not an empty document


def test_stats_versions_are_unique_on_a_cluster_and_the_document_is_the_newest(on_cluster):
    published: list[int] = []
    lock = threading.Lock()
    snapshot = StatsSnapshot(version=0, generated_at=0.0, window="1h")

    def publisher() -> None:
        client = redis.RedisCluster.from_url(get_redis_url(on_cluster))
        for _ in range(10):
            version = snapshot_publish(client=client, snapshot=snapshot)  # type: ignore[arg-type]
            with lock:
                published.append(version)
        client.close()

    threads = [threading.Thread(target=publisher) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(published) == list(range(1, 41))
    final = StatsSnapshot.from_json(on_cluster.get(redis_keys.STATS_SNAPSHOT))
    assert final.version == int(on_cluster.get(redis_keys.STATS_VERSION)) == 40


def get_redis_url(client: redis.Redis) -> str:
    node = client.get_default_node()  # type: ignore[attr-defined]
    return f"redis://{node.host}:{node.port}/0"


def test_a_balance_adjustment_moves_the_counter_once_on_a_cluster(on_cluster, tenant):
    counter = redis_keys.tenant_available(tenant.pk)
    on_cluster.set(counter, 1_000)
    tenant_update(tenant=tenant, billing_mode="postpaid", credit_limit_micros=5_000)
    assert int(on_cluster.get(counter)) == 6_000
    row = OutboxRow.objects.get(topic=Topic.BALANCE_ADJUST)
    OutboxRow.objects.filter(pk=row.pk).update(published_at=None)  # drained again after a crash
    assert outbox_drain() == 1
    assert int(on_cluster.get(counter)) == 6_000
