"""Gateway traces, when an operator turns them on (contracts.tracing): one server span per call, with
children for admission, the routing decision, each upstream attempt (routing.forwarding.attempt_span) and
the usage hand-off and settlement.

Off, the app is not wrapped at all and every hook below is one ContextVar read; this module imports
nothing of OpenTelemetry until a call is traced. A call the sampler leaves out
(``OTEL_TRACES_SAMPLER``) costs its server span's sampling decision and nothing more. Attributes carry ids, names, numbers and states only — never an API key,
a header value or any text of the prompt or the answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from routing.http.asgi_io import Receive, Scope, Send
from routing.telemetry.metrics import endpoint_label

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

ASGIHandler = Callable[[Scope, Receive, Send], Awaitable[None]]
TRACE_HEADERS = (b"traceparent", b"tracestate")  # W3C trace context: the caller's trace continues


@dataclass(slots=True)
class RequestTrace:
    """What one call's hooks need: the tracer, its server span, whether its hedge has started."""

    tracer: Tracer
    span: Span
    hedge_started: bool = False


CURRENT: ContextVar[RequestTrace | None] = ContextVar("tokenway_request_trace", default=None)
_Call = TypeVar("_Call")  # the call a hand-off is given (routing.handoff.call.Call; not imported: tracing is a leaf)

_OFF: AbstractContextManager[None] = nullcontext()


def span(name: str) -> AbstractContextManager[Span | None]:
    """A child span of this call's, current while the block runs; a no-op when traces are off."""
    current = CURRENT.get()
    return _OFF if current is None else current.tracer.start_as_current_span(name)


def note_request_id(request_id: str) -> None:
    current = CURRENT.get()
    if current is not None:
        current.span.set_attribute("tokenway.request_id", request_id)


def traceparent() -> str:
    """This call's server span as a W3C ``traceparent`` (for its usage event); "" when it is not traced."""
    current = CURRENT.get()
    if current is None:
        return ""
    context = current.span.get_span_context()
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"


def traced(tracer: Tracer, inner: ASGIHandler) -> ASGIHandler:
    """``inner`` under a server span that continues the caller's trace (``traceparent``)."""
    from opentelemetry.trace import SpanKind, StatusCode

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        status = 0

        def observing_send(message: dict[str, Any]) -> Awaitable[None]:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            return send(message)

        route = endpoint_label(scope["path"])
        with tracer.start_as_current_span(
            f"{scope['method']} {route}", context=_incoming(scope), kind=SpanKind.SERVER,
            attributes={"http.request.method": scope["method"], "http.route": route},
        ) as server:  # fmt: skip
            # A call the sampler left out gets no child spans at all: its hooks cost what they cost off.
            token = CURRENT.set(RequestTrace(tracer, server) if server.is_recording() else None)
            try:
                await inner(scope, receive, observing_send)
            finally:
                CURRENT.reset(token)
                server.set_attribute("http.response.status_code", status)
                if status >= 500:
                    server.set_status(StatusCode.ERROR)

    return serve


def _incoming(scope: Scope) -> Context | None:
    carrier = {name.decode(): value.decode("latin-1") for name, value in scope["headers"] if name in TRACE_HEADERS}
    if not carrier:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator().extract(carrier)


def traced_hand_off(hand_off: Callable[[_Call], Awaitable[None]]) -> Callable[[_Call], Awaitable[None]]:
    """The early usage hand-off (just before an answer's last byte) in a span of its own."""
    if CURRENT.get() is None:
        return hand_off

    async def run(call: _Call) -> None:
        with span("usage hand-off"):
            await hand_off(call)

    return run
