"""Upstream attempts in a call's trace: one client span per attempt, from its start to its first byte
(an event), named by its place in the call: ``first``, ``failover`` or ``hedge``.

The attempt's ``traceparent`` goes to the provider only when the operator allows it
(``TOKENWAY_TRACE_UPSTREAM``): providers are third parties, and by default they learn nothing of
our traces. A tenant's own endpoint (BYOK, its own client session) never gets it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from types import SimpleNamespace
from typing import TYPE_CHECKING

import aiohttp

from routing.http.errors import UpstreamFailure
from routing.telemetry.tracing import CURRENT, RequestTrace

if TYPE_CHECKING:
    from contracts.snapshot import OfferingSnapshot
    from routing.handoff.call import Call
    from routing.upstream.attempt import Opened


def attempt(call: Call, offering: OfferingSnapshot, opening: Awaitable[Opened]) -> Awaitable[Opened]:
    """``opening`` as it is when traces are off; else the same attempt inside its span."""
    current = CURRENT.get()
    if current is None:
        return opening
    return _traced(current, call, offering, opening)


def attempt_kind(current: RequestTrace, call: Call) -> str:
    """Hedging appends ``+hedge`` to the route reason just before it starts the hedge (one per call)."""
    if call.route_reason.endswith("+hedge") and not current.hedge_started:
        current.hedge_started = True
        return "hedge"
    return "first" if call.attempts == 0 else "failover"


async def _traced(current: RequestTrace, call: Call, offering: OfferingSnapshot, opening: Awaitable[Opened]) -> Opened:
    from opentelemetry.trace import SpanKind, StatusCode

    attributes: dict[str, str | int] = {
        "tokenway.attempt.number": call.attempts + 1,
        "tokenway.attempt.kind": attempt_kind(current, call),
        "tokenway.provider": offering.provider,
        "tokenway.offering": f"{offering.provider}/{offering.model}",
    }
    with current.tracer.start_as_current_span(
        "upstream attempt", kind=SpanKind.CLIENT, attributes=attributes,
        record_exception=False, set_status_on_exception=False,
    ) as span:  # fmt: skip
        try:
            opened = await opening
        except UpstreamFailure as failure:
            span.set_attribute("tokenway.attempt.outcome", failure.kind)
            span.set_attribute("tokenway.attempt.retryable", failure.retryable)
            if failure.upstream_status is not None:
                span.set_attribute("http.response.status_code", failure.upstream_status)
            span.set_status(StatusCode.ERROR, failure.kind)  # the kind only: a provider's message may quote the prompt
            raise
        except asyncio.CancelledError:
            span.set_attribute("tokenway.attempt.outcome", "cancelled")  # a hedge's loser, or the caller left
            raise
        span.add_event("first_byte", {"tokenway.ttfb_ms": round(opened.ttfb_ms, 3)})
        span.set_attributes({"tokenway.attempt.outcome": "opened", "http.response.status_code": 200})
        return opened


def propagation_hooks() -> list[aiohttp.TraceConfig]:
    """Client-session hooks that add the current attempt's ``traceparent`` to its upstream request."""
    hooks = aiohttp.TraceConfig()
    hooks.on_request_start.append(_add_traceparent)
    return [hooks]


async def _add_traceparent(
    session: aiohttp.ClientSession, context: SimpleNamespace, params: aiohttp.TraceRequestStartParams
) -> None:
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    # The attempt's span, current in this task; an unsampled call's server span (flag 00), so the
    # provider follows our decision; nothing outside a traced call.
    TraceContextTextMapPropagator().inject(carrier)
    if "traceparent" in carrier:  # the caller's tracestate stays with us
        params.headers["traceparent"] = carrier["traceparent"]
