"""Whether the data Redis is a Redis Cluster: one answer for the gateway and the platform.

``TOKENWAY_REDIS_CLUSTER``: "1" a cluster (the URL names any one node), "0" a single server,
unset: ask the server (``INFO cluster``), once, when the client is built.
"""

from __future__ import annotations

from urllib.parse import unquote, urlparse

import redis


def cluster_switch(value: str) -> bool | None:
    """The setting's answer, or None when it leaves the question to the server."""
    value = value.strip()
    return None if value not in ("0", "1") else value == "1"


def server_is_cluster(url: str, *, timeout_s: float) -> bool:
    """``INFO cluster`` of the server at ``url`` says cluster_enabled:1. The URL's database number is
    not used (a cluster node refuses SELECT). Raises ``redis.RedisError`` when the server cannot be asked."""
    parsed = urlparse(url)
    probe = redis.Redis(
        host=parsed.hostname or "127.0.0.1",
        port=parsed.port or 6379,
        password=unquote(parsed.password) if parsed.password else None,
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s,
    )
    try:
        return bool(probe.info("cluster").get("cluster_enabled"))
    finally:
        probe.close()
