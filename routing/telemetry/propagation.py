"""The attempt's ``traceparent`` to the provider, only when the operator allows it
(``TOKENWAY_TRACE_UPSTREAM``): providers are third parties, and by default they learn nothing of
our traces. A tenant's own endpoint (BYOK, its own client session) never gets it. The attempt's
span itself is opened by routing.forwarding.attempt_span.
"""

from __future__ import annotations

from types import SimpleNamespace

import aiohttp


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
