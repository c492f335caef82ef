"""An ASGI app that fails the way a bug would, for the edge protocol's last-resort 500 (served by
uvicorn in a subprocess: tests/routing/test_edge_limits.py)."""

from __future__ import annotations

from typing import Any


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["path"].endswith("/silent"):
        return  # returned without an answer
    raise RuntimeError("a bug")
