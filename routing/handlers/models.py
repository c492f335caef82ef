"""``GET /v1/models`` and ``GET /v1/models/{id}``: one shape both SDKs parse."""

from __future__ import annotations

import time
from typing import Any

import orjson

from routing.gateway import Gateway
from routing.handlers import model_pages
from routing.handlers.intake import authenticate, new_request_id, send_error
from routing.http.asgi_io import Scope, Send, header_map, request_id_headers, respond
from routing.http.errors import GatewayError
from routing.router.route import resolve_model
from routing.wire.dialects import ANTHROPIC, OPENAI, Dialect

PREFIX = "/v1/models"


def _dialect(headers: dict[str, str]) -> Dialect:
    return ANTHROPIC if "anthropic-version" in headers else OPENAI


def _model(gateway: Gateway, model: str, created: int, *, name: str | None = None) -> dict[str, Any]:
    """A catalog model's entry; ``name``: the entry of one of its other names (``alias_of`` says whose)."""
    offerings = gateway.catalog.by_model[model]
    return {
        "id": name or model,
        "object": "model",
        "type": "model",
        "created": created,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created)),
        "display_name": model,
        "owned_by": "tokenway",
        "context_length": max(o.context_window for o in offerings),
        "providers": sorted({o.provider for o in offerings}),
        "aliases": gateway.catalog.names.listed.get(model, []),
        **({"alias_of": model} if name else {}),
    }


def _one(gateway: Gateway, model_id: str, created: int, *, family_fallback: bool) -> dict[str, Any]:
    resolution = resolve_model(gateway.catalog, model_id, family_fallback=family_fallback)
    return _model(gateway, resolution.model, created, name=None if resolution.kind == "slug" else model_id)


def _all(gateway: Gateway, created: int) -> list[dict[str, Any]]:
    """Catalog models, then one entry per provider id (``claude-sonnet-4-5-20250929``) they answer to."""
    models = [_model(gateway, m, created) for m in gateway.catalog.models()]
    official = sorted(gateway.catalog.names.official.items())
    return models + [
        _model(gateway, slug, created, name=name) for name, slug in official if slug in gateway.catalog.by_model
    ]


async def serve(gateway: Gateway, scope: Scope, send: Send) -> None:
    headers = header_map(scope)
    request_id = new_request_id()
    dialect = _dialect(headers)
    created = int(gateway.catalog.catalog.generated_at) if gateway.catalog.catalog else 0
    try:
        record = await authenticate(gateway, headers)
        model_id = scope["path"][len(PREFIX) :].lstrip("/")
        if model_id:
            body = _one(gateway, model_id, created, family_fallback=record.model_family_fallback)
        else:
            body = model_pages.page(_all(gateway, created), model_pages.query(scope.get("query_string", b"")))
    except GatewayError as err:
        await send_error(send, dialect, err, request_id)
        return
    await respond(send, 200, orjson.dumps(body), request_id_headers(request_id))
