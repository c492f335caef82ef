"""The stats snapshot is versioned and atomic under concurrent refreshes."""

from __future__ import annotations

import threading

import pytest
import redis
from django.conf import settings

from contracts import redis_keys
from contracts.snapshot import StatsSnapshot
from evaluation.services.refresh import stats_refresh
from evaluation.services.snapshot import build_snapshot, snapshot_publish


def test_concurrent_publishers_never_share_a_version(redis_client):
    published: list[int] = []
    lock = threading.Lock()
    snapshot = StatsSnapshot(version=0, generated_at=0.0, window="1h")

    def publisher():
        client = redis.Redis.from_url(settings.REDIS_URL)
        for _ in range(25):
            version = snapshot_publish(client=client, snapshot=snapshot)
            stored = StatsSnapshot.from_json(client.get(redis_keys.STATS_SNAPSHOT))
            assert stored.version <= int(client.get(redis_keys.STATS_VERSION))
            with lock:
                published.append(version)

    threads = [threading.Thread(target=publisher) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(published) == list(range(1, 201))
    final = StatsSnapshot.from_json(redis_client.get(redis_keys.STATS_SNAPSHOT))
    assert final.version == int(redis_client.get(redis_keys.STATS_VERSION)) == 200


def test_publish_notifies_gateways_on_the_snapshot_channel(redis_client):
    pubsub = redis_client.pubsub()
    pubsub.subscribe(redis_keys.SNAPSHOT_CHANNEL)
    pubsub.get_message(timeout=1)
    snapshot_publish(client=redis_client, snapshot=StatsSnapshot(version=0, generated_at=0.0, window="1h"))
    message = pubsub.get_message(timeout=2)
    assert message is not None and message["data"] == b"stats"
    pubsub.close()


@pytest.mark.django_db(transaction=True)
def test_refresh_publishes_snapshot_and_tells_the_leaderboard_group(redis_client, catalog):
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(redis_keys.LEADERBOARD_GROUP, channel)
    report = stats_refresh(force=True)
    message = async_to_sync(layer.receive)(channel)
    assert message["type"] == "leaderboard.update" and message["version"] == report.version
    assert StatsSnapshot.from_json(redis_client.get(redis_keys.STATS_SNAPSHOT)).version == report.version
    assert build_snapshot().window == "1h"
