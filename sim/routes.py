"""Provider endpoints: /<provider>/v1/chat/completions, /messages, /messages/count_tokens, /embeddings, /models."""

from __future__ import annotations

import orjson
from aiohttp import web

from sim import errors as e
from sim.control import FLEET_KEY
from sim.dialects import anthropic_request
from sim.dialects.registry import ANTHROPIC, OPENAI
from sim.embeddings import embeddings
from sim.errors import SimError
from sim.respond import _request_id, error_response, serve


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await serve(request.app[FLEET_KEY], OPENAI, request)


async def messages(request: web.Request) -> web.StreamResponse:
    return await serve(request.app[FLEET_KEY], ANTHROPIC, request)


async def count_tokens(request: web.Request) -> web.Response:
    fleet = request.app[FLEET_KEY]
    provider = fleet.providers.get(request.match_info["provider"])
    request_id = _request_id()
    try:
        if provider is None:
            raise SimError(e.NOT_FOUND, "Unknown simulated provider.")
        body = orjson.loads(await request.read())
        model, prompt = anthropic_request.parse(body, count_only=True)
        if provider.offering(model) is None:
            raise SimError(e.NOT_FOUND, f"model: {model}")
    except orjson.JSONDecodeError:
        return error_response(provider, SimError(e.INVALID, "Invalid JSON body"), request_id, ANTHROPIC)
    except SimError as err:
        return error_response(provider, err, request_id, ANTHROPIC)
    return web.Response(
        body=orjson.dumps({"input_tokens": prompt.tokens}),
        content_type="application/json",
        headers={"request-id": request_id},
    )


async def models(request: web.Request) -> web.Response:
    provider = request.app[FLEET_KEY].providers.get(request.match_info["provider"])
    if provider is None:
        raise web.HTTPNotFound()
    items = provider.unique_offerings()
    if provider.dialect == "anthropic":
        data = [
            {
                "type": "model",
                "id": o.spec.upstream_model,
                "display_name": o.spec.model,
                "created_at": "2025-01-01T00:00:00Z",
            }
            for o in items
        ]
        page = {
            "data": data,
            "has_more": False,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }
        return web.Response(body=orjson.dumps(page), content_type="application/json")
    listing = [
        {"id": o.spec.upstream_model, "object": "model", "created": 1735689600, "owned_by": provider.slug}
        for o in items
    ]
    return web.Response(body=orjson.dumps({"object": "list", "data": listing}), content_type="application/json")


def add_routes(app: web.Application) -> None:
    app.router.add_post("/{provider}/v1/chat/completions", chat_completions)
    app.router.add_post("/{provider}/v1/messages", messages)
    app.router.add_post("/{provider}/v1/messages/count_tokens", count_tokens)
    app.router.add_post("/{provider}/v1/embeddings", embeddings)
    app.router.add_get("/{provider}/v1/models", models)
