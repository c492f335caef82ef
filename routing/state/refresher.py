"""Background refresh: pub/sub for fast invalidation, version polling as the safety net.

Either path alone brings a revocation or a price change within a second; pub/sub
usually within milliseconds, the 200 ms poll when a message is lost (reconnects).
"""

from __future__ import annotations

import asyncio
import logging
import time

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from contracts import redis_keys as rk
from contracts.snapshot import CatalogSnapshot, StatsSnapshot
from routing.redis.pipe import PipelinedRedis, RedisUnavailable
from routing.state.keys import KeyCache
from routing.state.offerings import CatalogState

log = logging.getLogger("routing.refresher")


class Refresher:
    def __init__(self, redis: PipelinedRedis, keys: KeyCache, catalog: CatalogState, poll_s: float) -> None:
        self._redis = redis
        self._keys = keys
        self._catalog = catalog
        self._poll_s = poll_s
        self._versions: list[bytes | None] = [None, None, None]
        self._marker: bytes | None = None  # last STATE_MARKER seen (None: never, or Redis lost it)
        self._tasks: list[asyncio.Task[None]] = []
        self.last_refresh = 0.0

    async def start(self) -> None:
        await self.poll_once()
        self._tasks = [asyncio.create_task(self._poll_loop()), asyncio.create_task(self._subscribe_loop())]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def poll_once(self) -> None:
        reply = await self._redis.execute(
            "MGET", rk.KEYS_VERSION, rk.CATALOG_VERSION, rk.STATS_VERSION, rk.STATE_MARKER
        )
        keys_v, catalog_v, stats_v, marker = reply
        versions = [keys_v, catalog_v, stats_v]
        self._watch_marker(marker)
        if keys_v != self._versions[0] and not self._keys.rebuilding:
            self._keys.invalidate("*")
        if catalog_v != self._versions[1] or self._catalog.catalog is None:
            await self._load_catalog()
        if stats_v != self._versions[2]:
            await self._load_stats()
        self._versions = versions
        self.last_refresh = time.monotonic()

    def _watch_marker(self, marker: bytes | None) -> None:
        """Seen, then gone: Redis restarted empty. Cached keys keep serving until the marker is back."""
        if marker is None and self._marker is not None:
            if not self._keys.rebuilding:
                log.warning("redis lost its data; cached keys and snapshots serve until they are republished")
            self._keys.rebuilding = True
            return
        if marker is not None and self._keys.rebuilding:
            self._keys.rebuilding = False
            self._keys.invalidate("*")
        if marker is not None:
            self._marker = marker

    async def _load_catalog(self) -> None:
        raw = await self._redis.execute("GET", rk.CATALOG_SNAPSHOT)
        if raw:
            self._catalog.set_catalog(CatalogSnapshot.from_json(raw))

    async def _load_stats(self) -> None:
        raw = await self._redis.execute("GET", rk.STATS_SNAPSHOT)
        if raw:
            self._catalog.set_stats(StatsSnapshot.from_json(raw))

    async def _poll_loop(self) -> None:
        while True:
            await asyncio.sleep(self._poll_s)
            try:
                await self.poll_once()
            except (RedisUnavailable, ValueError, OSError) as exc:
                log.warning("snapshot/key poll failed: %s", exc)

    async def _subscribe_loop(self) -> None:
        while True:
            try:
                await self._subscribe()
            except (RedisError, OSError) as exc:
                log.warning("pub/sub lost, retrying: %s", exc)
                await asyncio.sleep(0.5)

    async def _subscribe(self) -> None:
        # One node of a cluster is enough (PUBLISH reaches every node); the next attempt asks another.
        client = aioredis.Redis.from_url(self._redis.pubsub_url())
        try:
            async with client.pubsub() as pubsub:
                await pubsub.subscribe(rk.KEYS_CHANNEL, rk.SNAPSHOT_CHANNEL)
                async for message in pubsub.listen():
                    await self._on_message(message)
        finally:
            await client.aclose()

    async def _on_message(self, message: dict[str, object]) -> None:
        if message.get("type") != "message":
            return
        channel, data = message.get("channel"), message.get("data")
        if channel == rk.KEYS_CHANNEL.encode() and isinstance(data, bytes):
            self._keys.invalidate(data.decode())
        elif channel == rk.SNAPSHOT_CHANNEL.encode():
            await self.poll_once()
