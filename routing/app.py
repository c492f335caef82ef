"""Gateway ASGI application (placeholder until the gateway lands)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_HEAD_PROBES = {"/", "/api/hello"}


def is_gateway_path(scope: Scope) -> bool:
    path: str = scope.get("path", "")
    if path.startswith("/v1/") or path == "/v1":
        return True
    return scope.get("method") == "HEAD" and path in _HEAD_PROBES


def make_gateway_app() -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b'{"error": {"message": "gateway not available", "type": "server_error", "code": "not_implemented"}}'
        await send({"type": "http.response.start", "status": 501, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    return app
