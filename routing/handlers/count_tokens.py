"""``POST /v1/messages/count_tokens``: the gateway's estimate (contracts.tokens), no upstream call."""

from __future__ import annotations

import orjson

from routing.gateway import Gateway
from routing.handlers.intake import authenticate, new_request_id, parse_json, send_error
from routing.http.asgi_io import ClientGone, Receive, Scope, Send, header_map, read_body, request_id_headers, respond
from routing.http.errors import GatewayError
from routing.router.route import resolve_model
from routing.wire import anthropic
from routing.wire.dialects import ANTHROPIC


async def serve(gateway: Gateway, scope: Scope, receive: Receive, send: Send) -> None:
    request_id = new_request_id()
    try:
        record = await authenticate(gateway, header_map(scope))
        view = anthropic.view(parse_json(await read_body(receive, gateway.config.max_body_bytes)), count_only=True)
        resolve_model(gateway.catalog, view.model, family_fallback=record.model_family_fallback)
    except GatewayError as err:
        await send_error(send, ANTHROPIC, err, request_id)
        return
    except ClientGone:
        return
    body = orjson.dumps({"input_tokens": view.input_estimate})
    await respond(send, 200, body, request_id_headers(request_id))
