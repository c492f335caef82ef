"""The one outbound HTTP client: a shared aiohttp session, pooled, no redirects, bounded connects.

Upstream URLs come from the catalog (operators), never from callers, so no
per-request target validation is needed here; first-token, idle-gap and deadline
timeouts are applied per read by the relay, not by the session.

No fixed cap on open upstream connections: the process is bounded by its file
descriptors and memory (routing.process.capacity). An operator may cap the requests in
flight to one upstream host (``TOKENWAY_UPSTREAM_PER_HOST``); a request waiting
for such a slot waits at most ``TOKENWAY_POOL_WAIT`` seconds and then fails with
:class:`PoolWaitTimeout` — its own error, never a connect timeout, never a breaker
failure of a provider that is merely busy with our own traffic.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from contracts.regions import REGION_HEADER
from routing.process.config import GatewayConfig
from routing.telemetry.propagation import propagation_hooks

if TYPE_CHECKING:
    from aiohttp.client_reqrep import ClientRequest
    from aiohttp.connector import Connection
    from aiohttp.tracing import Trace

KEEPALIVE_S = 30.0


class PoolWaitTimeout(aiohttp.ClientError):
    """No slot to the upstream host freed up within the pool-wait bound (our limit, not the provider's)."""


@dataclass(slots=True)
class PoolStats:
    in_flight: int = 0  # upstream requests holding a connection now
    waiting: int = 0  # requests waiting for a per-host slot now
    waited: int = 0  # requests that had to wait (since start)
    wait_timeouts: int = 0  # requests refused after waiting pool_wait_s (since start)


class UpstreamConnector(aiohttp.TCPConnector):
    """aiohttp's connector without a total cap, with an optional per-host cap and a bounded wait for it."""

    def __init__(self, *, per_host_limit: int, pool_wait_s: float, **kwargs: Any) -> None:
        super().__init__(limit=0, limit_per_host=0, **kwargs)
        self.per_host_limit = per_host_limit
        self.pool_wait_s = pool_wait_s
        self.stats = PoolStats()
        self._slots: dict[str, asyncio.Semaphore] = {}

    async def connect(self, req: ClientRequest, traces: list[Trace], timeout: aiohttp.ClientTimeout) -> Connection:
        slot = self._slot_for(f"{req.url.host}:{req.url.port}") if self.per_host_limit else None
        if slot is not None:
            await self._acquire(slot)
        try:
            conn = await super().connect(req, traces, timeout)
        except BaseException:
            if slot is not None:
                slot.release()
            raise
        self.stats.in_flight += 1
        conn.add_callback(self._released if slot is None else lambda: self._released(slot))
        return conn

    def _slot_for(self, host: str) -> asyncio.Semaphore:
        slot = self._slots.get(host)
        if slot is None:
            slot = self._slots[host] = asyncio.Semaphore(self.per_host_limit)
        return slot

    async def _acquire(self, slot: asyncio.Semaphore) -> None:
        if not slot.locked():
            await slot.acquire()  # free slot: returns without suspending
            return
        stats = self.stats
        stats.waited += 1
        stats.waiting += 1
        try:
            async with asyncio.timeout(self.pool_wait_s):
                await slot.acquire()
        except TimeoutError:
            stats.wait_timeouts += 1
            raise PoolWaitTimeout(f"no upstream slot within {self.pool_wait_s:g} s") from None
        finally:
            stats.waiting -= 1

    def _released(self, slot: asyncio.Semaphore | None = None) -> None:
        self.stats.in_flight -= 1
        if slot is not None:
            slot.release()


def make_session(config: GatewayConfig) -> aiohttp.ClientSession:
    connector = UpstreamConnector(
        per_host_limit=config.upstream_per_host_limit,
        pool_wait_s=config.pool_wait_s,
        ttl_dns_cache=300,
        keepalive_timeout=KEEPALIVE_S,
    )
    # connect bounds DNS + TCP (+TLS) of a new connection only: a per-host slot is waited for before it.
    timeout = aiohttp.ClientTimeout(total=None, connect=config.connect_timeout_s, sock_connect=config.connect_timeout_s)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        json_serialize=lambda value: orjson.dumps(value).decode(),
        skip_auto_headers=("User-Agent",),
        # No cookies: one session serves every tenant, so a provider's Set-Cookie must not ride on the next
        # tenant's request; and no jar to filter per request.
        cookie_jar=aiohttp.DummyCookieJar(),
        auto_decompress=True,
        headers={REGION_HEADER: config.region},  # upstream network distance depends on it (contracts.regions)
        trace_configs=propagation_hooks() if config.trace_upstream else None,  # traceparent to providers: opt-in
    )


def pool_stats(session: aiohttp.ClientSession | None) -> PoolStats:
    connector = session.connector if session is not None else None
    return connector.stats if isinstance(connector, UpstreamConnector) else PoolStats()
