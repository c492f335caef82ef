"""Leaderboard responses cached in Redis under the stats version: a new snapshot is a new key."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import orjson

from evaluation.services.snapshot import current_version
from foundation.redis_client import get_redis

# Old versions are never read again; a short TTL lets them expire soon after the next refresh.
CACHE_TTL_S = 120


def cached_json(namespace: str, params: dict[str, Any], build: Callable[[], Any]) -> bytes:
    client = get_redis()
    digest = hashlib.sha256(orjson.dumps(params, option=orjson.OPT_SORT_KEYS)).hexdigest()[:24]
    key = f"tw:eval:cache:{namespace}:{current_version(client)}:{digest}"
    hit = client.get(key)
    if hit is not None:
        return hit if isinstance(hit, bytes) else str(hit).encode()
    body = orjson.dumps(build())
    client.set(key, body, ex=CACHE_TTL_S)
    return body
