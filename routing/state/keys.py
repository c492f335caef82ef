"""API key records cached in process, invalidated by pub/sub and a polled version key."""

from __future__ import annotations

import time

from contracts import redis_keys as rk
from contracts.apikey_format import hash_key, is_well_formed
from contracts.keyrecord import KeyRecord
from routing.http.errors import invalid_key
from routing.redis.pipe import PipelinedRedis, RedisUnavailable

MISSING_TTL_S = 1.0  # an unknown key is asked again after this long (new keys also publish)
MAX_CACHED = 100_000


class KeyCache:
    def __init__(self, redis: PipelinedRedis, pepper: str) -> None:
        self._redis = redis
        self._pepper = pepper
        self._records: dict[str, tuple[KeyRecord | None, float]] = {}
        self._hashes: dict[str, str] = {}  # key -> hmac, so the HMAC is computed once per key
        # Redis lost its data and the platform has not republished yet: an unknown key may be a
        # known one not restored yet, so it is answered 503 (retry), not 401.
        self.rebuilding = False

    async def resolve(self, key: str) -> KeyRecord:
        """The key's record, or 401: malformed keys never reach Redis; expired keys are refused."""
        key_hash = self._hashes.get(key)
        if key_hash is None:
            if not is_well_formed(key):
                raise invalid_key()
            key_hash = self._remember_hash(key)
        record = await self._record(key_hash)
        if record is None and self.rebuilding:
            raise RedisUnavailable("key records are being republished")
        if record is None or (record.expires_at is not None and record.expires_at <= time.time()):
            raise invalid_key()
        return record

    def _remember_hash(self, key: str) -> str:
        if len(self._hashes) >= MAX_CACHED:
            self._hashes.clear()
        key_hash = hash_key(key, self._pepper)
        self._hashes[key] = key_hash
        return key_hash

    async def _record(self, key_hash: str) -> KeyRecord | None:
        cached = self._records.get(key_hash)
        if cached is not None and (cached[0] is not None or cached[1] > time.monotonic()):
            return cached[0]
        raw = await self._redis.execute("GET", rk.key_record(key_hash))
        record = KeyRecord.from_json(raw) if raw else None
        if len(self._records) >= MAX_CACHED:
            self._records.clear()
        self._records[key_hash] = (record, time.monotonic() + MISSING_TTL_S)
        return record

    def invalidate(self, key_hash: str) -> None:
        if key_hash == "*":
            self._records.clear()
        else:
            self._records.pop(key_hash, None)
