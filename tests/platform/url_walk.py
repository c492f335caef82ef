"""Walk of every /api/v1/ URL pattern and a snapshot of every table, shared by the sweeps over all routes
(the isolation walk, the bad-input sweep). New routes are covered automatically."""

from __future__ import annotations

import re

from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver

PARAM = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")


def _walk(resolver: URLResolver, prefix: str = "") -> list[str]:
    routes = []
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            routes += _walk(entry, route)
        elif isinstance(entry, URLPattern):
            routes.append(route)
    return routes


def api_routes() -> list[str]:
    return sorted({r.lstrip("^") for r in _walk(get_resolver()) if r.lstrip("^").startswith("api/v1/")})


def fill_route(route: str, ids: dict[str, object]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in ids:
            raise AssertionError(f"{route}: unknown path parameter {name!r}; add the victim's object to this test")
        return str(ids[name])

    return "/" + PARAM.sub(value, route)


def snapshot_rows() -> dict[str, list[tuple]]:
    """Every row of every managed table: equal snapshots mean nothing was written."""
    return {
        model._meta.label: sorted(map(tuple, model._default_manager.order_by("pk").values_list()))
        for model in apps.get_models()
        if model._meta.managed and not model._meta.proxy
    }
