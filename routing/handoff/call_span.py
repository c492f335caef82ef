"""A call's outcome on its server span (routing.telemetry.tracing): who (tenant id), what (model,
offering) and how it ended. Ids, names, numbers and states only."""

from __future__ import annotations

from collections.abc import Callable

from routing.handoff.call import Call
from routing.telemetry.tracing import CURRENT


def describe_call(call: Call, region: str, end_state: Callable[[Call], str]) -> None:
    """The call's outcome on its server span: who (tenant id), what (model, offering) and how it ended."""
    current = CURRENT.get()
    if current is None:
        return
    attributes: dict[str, str | int | float | bool] = {
        "tokenway.tenant_id": call.record.tenant_id,
        "tokenway.model": call.view.model,
        "tokenway.stream": call.view.stream,
        "tokenway.region": region,
        "tokenway.route_mode": call.mode,
        "tokenway.route_reason": call.route_reason,
        "tokenway.attempts": call.attempts,
        "tokenway.end_state": end_state(call),
    }
    if call.offering is not None:
        attributes["tokenway.provider"] = call.offering.provider
        attributes["tokenway.offering"] = f"{call.offering.provider}/{call.offering.model}"
    if call.ttft_ms is not None:
        attributes["tokenway.ttft_ms"] = round(call.ttft_ms, 3)
    if call.error_code:
        attributes["tokenway.error_code"] = call.error_code
    current.span.set_attributes(attributes)
