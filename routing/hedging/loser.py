"""The usage event of a hedged attempt that lost the race: provider cost only, end state
``hedge_cancelled`` (docs/billing.md, "End states").

Its connection was closed before its first byte, so the provider produced no output we saw; it may
have read the prompt, so the prompt (our estimate) is booked as the provider's cost at the input
price. The tenant pays nothing for it (charge 0, no hold: the call's own event settles the hold).
Its request id is the call's with ``-hedge`` appended, so metering applies it once, like any event.
"""

from __future__ import annotations

import time

from contracts.snapshot import OfferingSnapshot
from contracts.usage import Tokens, UsageEvent, cost_micros
from routing.handoff.call import Call

LOSER_SUFFIX = "-hedge"
LOSER_FLAG = "hedge_loser"


def loser_event(call: Call, offering: OfferingSnapshot, region: str) -> UsageEvent:
    tokens = Tokens(input_uncached=call.view.input_estimate)
    now = time.time()
    return UsageEvent(
        request_id=call.request_id + LOSER_SUFFIX, tenant_id=call.record.tenant_id, key_id=call.record.key_id,
        model=offering.model, offering_id=offering.offering_id, provider=offering.provider, region=region,
        route_mode=call.mode, route_reason=call.route_reason, tokens=tokens, usage_source="estimated",
        prices=offering.prices, cost_micros=cost_micros(tokens, offering.prices), charge_micros=0,
        status="client_cancelled", http_status=0, stream=call.view.stream,
        byok=bool(call.record.byok.get(offering.provider)), dialect_in=call.dialect.name, started_at=call.started_at,
        total_ms=(time.monotonic() - call.started_mono) * 1000, flags=(LOSER_FLAG,), finished_at=now,
        error_code="hedge_cancelled", end_state="hedge_cancelled",
    ).storable()  # fmt: skip
