"""The rendered leaderboard pages, cached per published statistics and catalog version.

A page's numbers change only when a stats refresh publishes a new snapshot (the version key goes up) or
the catalog is republished (prices, offerings). Both versions are in the cache key, so a publish makes
every older entry unreachable at once (they age out); no one has to delete anything. Before the first
snapshot (version 0) nothing is cached: the aggregates may still change without a version to say so.
The key also holds the language and the page's canonical path and query, so each view a visitor can share
is its own entry.

The entries live in the platform's Redis (not Django's per-process cache), compressed: every web process
reads what any of them, or the worker that pre-renders the default views after a publish
(``frontend.tasks.board_prerender``), rendered. While that worker renders a view of the new version, a
visitor of that view is served the view's previous version (``stale``) instead of rendering it a second
time; a view nobody is rendering is rendered on its visit, so a page is never older than one refresh.
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
QUERY_KEYS = ("q", "model", "provider", "region", "window", "sort", "dir", "param", "kind")
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


def _latest(key: str) -> str:
    """The pointer to the newest rendered version of the view ``key`` names (versions left out)."""
    language, digest = key.rsplit(":", 2)[-2:]
    return f"{PREFIX}latest:{language}:{digest}"


def put(key: str, page: dict[str, Any]) -> None:
    client = get_redis()
    client.set(key, zlib.compress(json.dumps(page).encode(), 1), ex=TTL_S)
    client.set(_latest(key), key, ex=TTL_S)


def mark_visited() -> None:
    """A visitor read a page: the next publishes pre-render the default views (evaluation.services.refresh)."""
    get_redis().set(redis_keys.BOARD_VISITED, "1", ex=TTL_S)


def claim(key: str, *, ttl_s: int = 60) -> bool:
    """True for the one caller that may render ``key`` now (pre-renders do not repeat each other's work)."""
    return bool(get_redis().set(f"{key}:rendering", "1", nx=True, ex=ttl_s))


def stale(key: str) -> dict[str, Any] | None:
    """The view's previous version while ``key`` is being rendered by someone else, else None."""
    client = get_redis()
    if not client.exists(f"{key}:rendering"):
        return None
    previous = client.get(_latest(key))
    if not isinstance(previous, bytes) or previous.decode() == key:
        return None
    return get(previous.decode())
