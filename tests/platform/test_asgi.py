"""The one ASGI application: a WebSocket upgrade under ``/v1`` (Codex tries ``/v1/responses``
first) is refused by the gateway at once, never left to Django's router."""

from __future__ import annotations

import asyncio
from typing import Any


def _handshake(path: str) -> list[dict[str, Any]]:
    from tokenway.asgi import application

    sent: list[dict[str, Any]] = []
    incoming = [{"type": "websocket.connect"}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await asyncio.sleep(3600)
        return {"type": "websocket.disconnect", "code": 1000}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "websocket", "path": path, "headers": [(b"openai-beta", b"responses_websockets=2026-02-04")],
             "query_string": b"", "subprotocols": []}  # fmt: skip
    asyncio.run(asyncio.wait_for(application(scope, receive, send), timeout=2))
    return sent


def test_websocket_to_v1_responses_is_closed_before_acceptance():
    assert _handshake("/v1/responses") == [{"type": "websocket.close", "code": 1008}]
