"""Upstream attempts in a call's trace: one client span per attempt, from its start to its first byte
(an event), named by its place in the call: ``first``, ``failover`` or ``hedge``. Whether the
attempt's ``traceparent`` goes to the provider is routing.telemetry.propagation's business.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from contracts.snapshot import OfferingSnapshot
from routing.handoff.call import Call
from routing.http.errors import UpstreamFailure
from routing.telemetry.tracing import CURRENT, RequestTrace
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
