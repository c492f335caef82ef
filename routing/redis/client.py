"""Which Redis client the gateway uses: the pipelined one, or its cluster variant.

``TOKENWAY_REDIS_CLUSTER`` (``GatewayConfig.redis_cluster``) says it: "1" a Redis Cluster (the
URL names any one node), "0" a single server, unset: ask the server once at start (``INFO
cluster``). The choice is made once, so a single server keeps the plain client with no work
per command; a server that cannot be asked is taken for a single one (set the variable in a
cluster deployment so a node down at start does not decide it).
"""

from __future__ import annotations

import logging

from redis.exceptions import RedisError

from contracts.redis_mode import server_is_cluster
from routing.redis.cluster import ClusterRedis
from routing.redis.pipe import CONNECT_TIMEOUT_S, PipelinedRedis

log = logging.getLogger("routing.redis")


def is_cluster(url: str) -> bool:
    """The server at ``url`` is a cluster node; one that cannot be asked is taken for a single server."""
    try:
        return server_is_cluster(url, timeout_s=CONNECT_TIMEOUT_S)
    except RedisError as exc:
        log.warning("redis at %s not asked whether it is a cluster (%s); using it as a single server", url, exc)
        return False


def redis_client(url: str, cluster: bool | None) -> PipelinedRedis:
    if cluster is None:
        cluster = is_cluster(url)
    return ClusterRedis(url) if cluster else PipelinedRedis(url)
