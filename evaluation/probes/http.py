"""The one outbound HTTP client of the probes: timeouts, pool size, no redirects."""

from __future__ import annotations

import aiohttp

from contracts.regions import REGION_HEADER

# Sockets kept per batch; the semaphore in the runner bounds concurrency below this anyway.
POOL_LIMIT = 256
CONNECT_TIMEOUT_S = 10.0


def new_session(*, total_timeout_s: float, region: str | None = None) -> aiohttp.ClientSession:
    """Every request names the worker's region (contracts.regions), as the gateway's do."""
    timeout = aiohttp.ClientTimeout(total=total_timeout_s, sock_connect=CONNECT_TIMEOUT_S)
    connector = aiohttp.TCPConnector(limit=POOL_LIMIT, ttl_dns_cache=300)
    return aiohttp.ClientSession(
        timeout=timeout,
        connector=connector,
        auto_decompress=True,
        skip_auto_headers=("User-Agent",),
        headers={REGION_HEADER: region} if region else None,
    )
