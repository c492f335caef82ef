"""Gateway ASGI application: lifespan starts the clients and refreshers; paths go to handlers."""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Awaitable
from functools import partial
from typing import TYPE_CHECKING

from contracts.tracing import TraceSettings, make_provider
from routing.gateway import Gateway
from routing.handlers import completions, count_tokens, embeddings, health, models, responses, unexpected, unserved
from routing.handlers.intake import new_request_id, send_error
from routing.http.asgi_io import MAX_HEADER_BYTES, ASGIApp, Receive, Scope, Send, StatusSeen, headers_too_large, respond
from routing.http.errors import GatewayError
from routing.process.config import GatewayConfig
from routing.router.strategy import Strategy
from routing.telemetry import metrics
from routing.telemetry.tracing import ASGIHandler, traced
from routing.wire.dialects import ANTHROPIC, OPENAI

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

log = logging.getLogger("routing.app")

_HEAD_PROBES = {"/", "/api/hello"}

__all__ = ["ASGIApp", "is_gateway_path", "make_gateway_app"]


def is_gateway_path(scope: Scope) -> bool:
    path: str = scope.get("path", "")
    if path.startswith("/v1/") or path == "/v1":
        return True
    return scope.get("method") == "HEAD" and path in _HEAD_PROBES


async def _lifespan(gateway: Gateway, traces: TracerProvider | None, receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await gateway.start()
            except Exception as exc:
                log.exception("gateway failed to start")
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            metrics.GATEWAYS.add(gateway, partial(health.snapshot, gateway))  # /metrics: health board, capacity
            # What start-up loaded (modules, catalog, clients) lives as long as the process: out of the
            # collector's view, its full collections walk only what requests allocate since.
            gc.freeze()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            metrics.GATEWAYS.remove(gateway)
            await gateway.stop()
            if traces is not None:
                traces.shutdown()  # exports the spans still batched
            await send({"type": "lifespan.shutdown.complete"})
            return


def _dispatch(gateway: Gateway, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
    """The handler's own awaitable, not a coroutine around it: no frame of ours per open stream here."""
    method, path = scope["method"], scope["path"]
    if headers_too_large(scope):
        dialect = ANTHROPIC if path.startswith("/v1/messages") else OPENAI
        err = GatewayError(431, "headers_too_large", f"Request headers exceed {MAX_HEADER_BYTES} bytes.")
        return send_error(send, dialect, err, new_request_id())
    elif method == "POST" and path == "/v1/chat/completions":
        return completions.serve(gateway, OPENAI, scope, receive, send)
    elif method == "POST" and path == "/v1/messages":
        return completions.serve(gateway, ANTHROPIC, scope, receive, send)
    elif method == "POST" and path == responses.PATH:
        return responses.serve(gateway, scope, receive, send)
    elif method == "GET" and path == responses.PATH:
        return responses.refuse_get(send)
    elif method == "POST" and path == embeddings.PATH:
        return embeddings.serve(gateway, scope, receive, send)
    elif method == "POST" and path == "/v1/messages/count_tokens":
        return count_tokens.serve(gateway, scope, receive, send)
    elif method == "GET" and (path == models.PREFIX or path.startswith(models.PREFIX + "/")):
        return models.serve(gateway, scope, send)
    elif method == "GET" and path == health.PATH:  # standalone process only: /healthz is Django's when combined
        return health.serve(gateway, send)
    elif method == "HEAD" and path in _HEAD_PROBES:
        return respond(send, 200, b"", [])
    else:
        return unserved.refuse(method, path, send)


async def _observed(gateway: Gateway, scope: Scope, receive: Receive, send: Send) -> None:
    """Dispatch, counting the call by endpoint and status and timing it to its last byte; an exception
    no handler expected is answered here (routing/handlers/unexpected.py)."""
    observing_send = StatusSeen(send)
    started = time.perf_counter()
    try:
        await _dispatch(gateway, scope, receive, observing_send)
    except Exception:  # a bug: the caller's 500 in its own shape with the request id, logged and counted
        if not await unexpected.answer(scope, observing_send):
            raise
    finally:
        metrics.observe_request(scope["path"], observing_send.status, time.perf_counter() - started)


def make_gateway_app(
    config: GatewayConfig | None = None, *, strategy: Strategy | None = None, traces: TraceSettings | None = None
) -> ASGIApp:
    """``traces``: from the standard OTEL_* variables unless given (contracts.tracing); off, calls are
    served exactly as without tracing."""
    gateway = Gateway(config or GatewayConfig.from_env(), strategy)
    traces = traces or TraceSettings.from_env("tokenway-gateway")
    provider = make_provider(traces) if traces.enabled else None
    serve: ASGIHandler = partial(_observed, gateway)
    if provider is not None:
        serve = traced(provider.get_tracer("routing"), serve)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(gateway, provider, receive, send)
        elif scope["type"] == "http":
            if scope["path"] == metrics.METRICS_PATH and scope["method"] == "GET":
                await metrics.serve_metrics(scope, send, gateway.config.metrics_token)
            else:
                await serve(scope, receive, send)
        elif scope["type"] == "websocket":  # no WebSocket endpoint: Responses clients fall back to POST
            await responses.refuse_websocket(receive, send)

    app.gateway = gateway  # type: ignore[attr-defined]
    app.tracer_provider = provider  # type: ignore[attr-defined]
    return app
