"""Cache affinity: which offering served a conversation fingerprint, within its cache TTL.

Kept in process (hot path) and written to Redis with the TTL so other gateway
processes pick it up on a local miss.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from contracts.redis_keys import PREFIX
from routing.redis.pipe import PipelinedRedis

MAX_ENTRIES = 200_000


def affinity_key(fingerprint: str) -> str:
    return f"{PREFIX}aff:{fingerprint}"


class AffinityStore:
    def __init__(self, redis: PipelinedRedis) -> None:
        self._redis = redis
        self._local: dict[str, tuple[int, float]] = {}

    async def lookup(self, fingerprint: str | None) -> int | None:
        if fingerprint is None:
            return None
        hit = self._local.get(fingerprint)
        if hit is not None and hit[1] > time.monotonic():
            return hit[0]
        raw = await self._redis.execute("GET", affinity_key(fingerprint))
        return int(raw) if raw else None

    def remember_local(self, fingerprint: str, offering_id: int, ttl_s: int) -> None:
        if len(self._local) >= MAX_ENTRIES:
            self._local.clear()
        self._local[fingerprint] = (offering_id, time.monotonic() + ttl_s)

    def submit(self, fingerprint: str, offering_id: int, ttl_s: int) -> asyncio.Future[Any]:
        """Share with the other gateway processes (pipelined with the call's accounting)."""
        return self._redis.submit("SET", affinity_key(fingerprint), offering_id, "EX", max(ttl_s, 1))
