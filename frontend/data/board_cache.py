"""The rendered leaderboard pages, cached per published statistics and catalog version.

A page's numbers change only when a stats refresh publishes a new snapshot (the version key goes up) or
the catalog is republished (prices, offerings). Both versions are in the cache key, so a publish makes
every older entry unreachable at once (they age out); no one has to delete anything. Before the first
snapshot (version 0) nothing is cached: the aggregates may still change without a version to say so.
The key also holds the language and the page's canonical path and query, so each view a visitor can share
is its own entry.

The entries live in the platform's Redis (not Django's per-process cache), compressed: every web process
reads what any of them, or the worker that pre-renders the default views after a publish
(``frontend.tasks.board_prerender``), rendered.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from typing import Any

from django.http import HttpRequest
from django.utils.translation import get_language

from contracts import redis_keys
from foundation.redis_client import get_redis

TTL_S = 15 * 60  # an entry outlives a few refreshes at most; a newer version makes it unreachable anyway
QUERY_KEYS = ("q", "model", "provider", "region", "window", "sort", "dir", "param")
PREFIX = f"{redis_keys.PREFIX}board:"


def versions() -> tuple[int, int]:
    """(stats snapshot version, catalog snapshot version) as published (two reads: in a Redis cluster the
    keys live in different slots)."""
    client = get_redis()
    return int(client.get(redis_keys.STATS_VERSION) or 0), int(client.get(redis_keys.CATALOG_VERSION) or 0)


def page_key(request: HttpRequest, *, path: str | None = None) -> str | None:
    """The entry's key, or None before the first snapshot. ``path`` names the page when two URLs show the
    same one (``/`` and ``/leaderboard/``)."""
    stats, catalog = versions()
    if not stats:
        return None
    query = "&".join(f"{k}={request.GET.get(k, '')}" for k in QUERY_KEYS if request.GET.get(k))
    digest = hashlib.sha256(f"{path or request.path}?{query}".encode()).hexdigest()[:32]
    return f"{PREFIX}s{stats}:c{catalog}:{get_language()}:{digest}"


def get(key: str) -> dict[str, Any] | None:
    raw = get_redis().get(key)
    if not isinstance(raw, bytes):
        return None
    found = json.loads(zlib.decompress(raw))
    return found if isinstance(found, dict) else None


def put(key: str, page: dict[str, Any]) -> None:
    get_redis().set(key, zlib.compress(json.dumps(page).encode(), 1), ex=TTL_S)


def claim(key: str, *, ttl_s: int = 60) -> bool:
    """True for the one caller that may render ``key`` now (pre-renders do not repeat each other's work)."""
    return bool(get_redis().set(f"{key}:rendering", "1", nx=True, ex=ttl_s))
