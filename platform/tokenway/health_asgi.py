"""``/healthz``, ``/readyz`` and ``/livez`` answered by the ASGI composition root, before Django.

No middleware, no thread hop, no database or Redis round trip: the answer is built from the latest
readings of the background checks (``tokenway.health.CHECKS``), so it takes microseconds however
loaded the process or slow its dependencies are.

- ``GET /livez``: the process answers (its event loop runs). Always 200; for a process manager.
- ``GET /healthz``: unchanged contract: 200, or 503 when a required component (database, Redis) is
  down, with every component's status.
- ``GET /readyz``: should this node get traffic: the same decision and components, each saying
  whether it is required and how old its reading is, and which required ones fail; 503 until the
  first check of every required component has come back.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from foundation.health_background import BackgroundChecks
from tokenway.health import CHECKS, COMPONENTS, summary

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

PATHS = frozenset({"/healthz", "/readyz", "/livez"})


def healthz(checks: BackgroundChecks) -> tuple[int, dict[str, Any]]:
    healthy, body = summary(checks.statuses())
    return (200 if healthy else 503), body


def readyz(checks: BackgroundChecks) -> tuple[int, dict[str, Any]]:
    statuses = checks.statuses()
    required = {c.name for c in COMPONENTS if c.required}
    failing = sorted(name for name in required if not (name in statuses and statuses[name].ok))
    components = {name: {**s.as_dict(), "required": name in required} for name, s in statuses.items()}
    return (503 if failing else 200), {"status": "not_ready" if failing else "ready", "failing": failing,
                                       "components": components}  # fmt: skip


def livez(checks: BackgroundChecks) -> tuple[int, dict[str, Any]]:
    return 200, {"status": "ok"}


_VIEWS = {"/healthz": healthz, "/readyz": readyz, "/livez": livez}


async def serve(scope: Scope, send: Send, checks: BackgroundChecks = CHECKS) -> None:
    if scope["method"] not in ("GET", "HEAD"):
        await _respond(send, 405, {"error": {"code": "method_not_allowed", "message": "Use GET.", "param": None}},
                       head=False, extra=[(b"allow", b"GET, HEAD")])  # fmt: skip
        return
    checks.start()  # no-op once the lifespan started it; a server without lifespan starts it here
    status, body = _VIEWS[scope["path"]](checks)
    await _respond(send, status, body, head=scope["method"] == "HEAD")


async def _respond(
    send: Send, status: int, body: dict[str, Any], *, head: bool, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
               (b"cache-control", b"no-store"), *(extra or [])]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else payload})


def lifespan_receive(receive: Receive, checks: BackgroundChecks = CHECKS) -> Receive:
    """The lifespan's ``receive``, starting the checks at startup and stopping it at shutdown."""

    async def wrapped() -> Message:
        message = await receive()
        if message["type"] == "lifespan.startup":
            checks.start()
        elif message["type"] == "lifespan.shutdown":
            checks.stop()
        return message

    return wrapped
