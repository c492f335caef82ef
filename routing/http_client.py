"""The one outbound HTTP client: a shared aiohttp session, pooled, no redirects, bounded connects.

Upstream URLs come from the catalog (operators), never from callers, so no
per-request target validation is needed here; first-token, idle-gap and deadline
timeouts are applied per read by the relay, not by the session.
"""

from __future__ import annotations

import aiohttp
import orjson

from routing.config import GatewayConfig

POOL_SIZE = 1000  # open connections across all providers
KEEPALIVE_S = 30.0


def make_session(config: GatewayConfig) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(
        limit=POOL_SIZE, limit_per_host=0, ttl_dns_cache=300, keepalive_timeout=KEEPALIVE_S
    )
    timeout = aiohttp.ClientTimeout(total=None, connect=config.connect_timeout_s, sock_connect=config.connect_timeout_s)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        json_serialize=lambda value: orjson.dumps(value).decode(),
        skip_auto_headers=("User-Agent",),
        auto_decompress=True,
    )
