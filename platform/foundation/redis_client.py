"""Shared synchronous Redis clients for the Django side (the gateway has its own async one).

``get_redis()`` is the data Redis (``REDIS_URL``): a ``redis.RedisCluster`` when that is a
Redis Cluster, a plain ``redis.Redis`` otherwise, so callers write one code path. Which one
is ``TOKENWAY_REDIS_CLUSTER``: "1" cluster, "0" single server, unset = ask the server
(``INFO cluster``). The Celery broker cannot be a cluster: ``get_broker_redis()`` is the
plain server at ``CELERY_BROKER_URL``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import cast

import redis
from django.conf import settings

from contracts.redis_mode import cluster_switch, server_is_cluster

TIMEOUT_S = 2


def cluster_mode(url: str, switch: str) -> bool:
    """``switch`` is TOKENWAY_REDIS_CLUSTER; unset (empty) asks the server at ``url``."""
    decided = cluster_switch(switch)
    return server_is_cluster(url, timeout_s=TIMEOUT_S) if decided is None else decided


def client_for(url: str, *, cluster: bool, timeout_s: float | None = TIMEOUT_S) -> redis.Redis:
    """A client of ``url``; a RedisCluster is typed as ``redis.Redis`` (the commands we use are the same)."""
    if cluster:
        node = redis.RedisCluster.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        return cast(redis.Redis, node)
    return redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)


def is_cluster(client: redis.Redis) -> bool:
    return isinstance(client, redis.RedisCluster)


@lru_cache(maxsize=1)
def get_redis() -> redis.Redis:
    return client_for(settings.REDIS_URL, cluster=cluster_mode(settings.REDIS_URL, settings.TOKENWAY_REDIS_CLUSTER))


@lru_cache(maxsize=1)
def get_broker_redis() -> redis.Redis:
    """Celery's broker (queue backlogs for health): always a single server."""
    return client_for(settings.CELERY_BROKER_URL, cluster=False)
