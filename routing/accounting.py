"""After the call: settle the hold and hand the usage event over — once per request id."""

from __future__ import annotations

import logging

from routing.call import Call
from routing.gateway import Gateway
from routing.limits.admission import settle
from routing.redis_pipe import RedisUnavailable
from routing.usage.emit import build_event, emit_again, submit_event

log = logging.getLogger("routing.accounting")


async def account(gw: Gateway, call: Call) -> None:
    """Refusals before admission leave no trace (nothing was held or forwarded); the rest one event."""
    if call.admission is None:
        return
    bill = call.bill()
    event = build_event(call, bill, gw.config.region)
    pending = submit_event(gw.redis, event, gw.config.generation_ttl_s)
    if call.complete and call.offering is not None and call.fingerprint is not None:
        gw.affinity.remember_local(call.fingerprint, call.offering.offering_id, call.offering.cache_ttl_s)
        pending.append(gw.affinity.submit(call.fingerprint, call.offering.offering_id, call.offering.cache_ttl_s))
    try:
        await settle(
            gw.redis,
            call.admission,
            charge_micros=bill.charge_micros,
            tokens_used=bill.tokens.input_total + bill.tokens.output,
        )
        for future in pending:
            await future
    except RedisUnavailable as exc:
        log.warning("accounting of %s retried after: %s", call.request_id, exc)
        await emit_again(gw.redis, event, gw.config.generation_ttl_s)
