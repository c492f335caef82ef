"""The leaderboard's default views rendered right after a statistics publish, so the first visitor of a new
version reads a cached page: every window × language × view (chat models, embedding models), no other
query. Rendered through the views' own code into the same cache (frontend.data.board_cache, in the shared
Redis) as a visit would."""

from __future__ import annotations

from itertools import product
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, QueryDict
from django.urls import reverse
from django.utils import translation

from frontend.data import board_cache
from frontend.data.leaderboard import CHAT, KINDS, WINDOWS
from frontend.views.leaderboard import board_body, index_build

DEFAULT_WINDOW = "24h"


def prerender_request(window: str, kind: str = CHAT) -> HttpRequest:
    """A GET of the board's canonical address with the window and view (the defaults have no query)."""
    params = {"kind": kind} if kind != CHAT else {}
    query = urlencode(params if window == DEFAULT_WINDOW else {**params, "window": window})
    request = HttpRequest()
    request.method = "GET"
    request.path = request.path_info = reverse("frontend:home")
    request.GET = QueryDict(query)
    request.META = {"SERVER_NAME": "prerender", "SERVER_PORT": "80", "QUERY_STRING": query}
    return request


def _render(request: HttpRequest) -> bool:
    """True when the page was rendered (False: another visitor or worker had stored it meanwhile)."""
    _page, source = board_body(request, lambda: index_build(request), path=request.path, stale_ok=False)
    return source == "miss"


def board_prerender() -> int:
    """Render the default views missing from the cache for the published version; the number rendered.
    Every view is claimed before the first is rendered, so from then on their visitors get the previous
    version (board_cache.stale) instead of rendering one themselves."""
    claimed: list[tuple[str, HttpRequest]] = []
    for language, _name in settings.LANGUAGES:
        with translation.override(language):
            for kind, window in product(KINDS, (DEFAULT_WINDOW, *(w for w in WINDOWS if w != DEFAULT_WINDOW))):
                request = prerender_request(window, kind)
                key = board_cache.page_key(request, path=request.path)
                if key is not None and board_cache.get(key) is None and board_cache.claim(key):
                    claimed.append((language, request))
    rendered = 0
    for language, request in claimed:
        with translation.override(language):
            rendered += _render(request)
    return rendered
