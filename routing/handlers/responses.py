"""``/v1/responses``: ``POST`` runs the chat-completions flow with the Responses dialect; the
WebSocket transport some clients try first (``GET`` with an upgrade) is refused at once, so they
fall back to ``POST`` with SSE without waiting."""

from __future__ import annotations

from collections.abc import Awaitable

from routing.gateway import Gateway
from routing.handlers import completions
from routing.handlers.intake import new_request_id, send_error
from routing.http.asgi_io import Receive, Scope, Send
from routing.http.errors import GatewayError
from routing.wire.dialects import RESPONSES

PATH = "/v1/responses"
WEBSOCKET_REFUSED = 1008  # policy violation: before acceptance the server answers the handshake with 403


def no_websocket() -> GatewayError:
    return GatewayError(
        426, "websocket_unsupported", "The Responses WebSocket transport is not served: use POST /v1/responses."
    )


def serve(gateway: Gateway, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
    return completions.serve(gateway, RESPONSES, scope, receive, send)  # no frame of its own per open stream


async def refuse_get(send: Send) -> None:
    await send_error(send, RESPONSES, no_websocket(), new_request_id())


async def refuse_websocket(receive: Receive, send: Send) -> None:
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close", "code": WEBSOCKET_REFUSED})
