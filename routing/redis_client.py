"""Which Redis client the gateway uses: the pipelined one, or its cluster variant.

``TOKENWAY_REDIS_CLUSTER`` (``GatewayConfig.redis_cluster``) says it: "1" a Redis Cluster (the
URL names any one node), "0" a single server, unset: ask the server once at start (``INFO
cluster``). The choice is made once, so a single server keeps the plain client with no work
per command; a server that cannot be asked is taken for a single one (set the variable in a
cluster deployment so a node down at start does not decide it).
"""

from __future__ import annotations

import logging
from urllib.parse import unquote, urlparse

import redis
from redis.exceptions import RedisError

from routing.redis_cluster import ClusterRedis
from routing.redis_pipe import CONNECT_TIMEOUT_S, PipelinedRedis

log = logging.getLogger("routing.redis")


def is_cluster(url: str) -> bool:
    """``INFO cluster`` of the server at ``url`` says cluster_enabled:1 (its database number ignored:
    a cluster node refuses SELECT)."""
    parsed = urlparse(url)
    probe = redis.Redis(
        host=parsed.hostname or "127.0.0.1", port=parsed.port or 6379,
        password=unquote(parsed.password) if parsed.password else None,
        socket_timeout=CONNECT_TIMEOUT_S, socket_connect_timeout=CONNECT_TIMEOUT_S,
    )  # fmt: skip
    try:
        return bool(probe.info("cluster").get("cluster_enabled"))
    except RedisError as exc:
        log.warning("redis at %s not asked whether it is a cluster (%s); using it as a single server", url, exc)
        return False
    finally:
        probe.close()


def redis_client(url: str, cluster: bool | None) -> PipelinedRedis:
    if cluster is None:
        cluster = is_cluster(url)
    return ClusterRedis(url) if cluster else PipelinedRedis(url)
