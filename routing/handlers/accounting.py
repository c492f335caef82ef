"""After the call: settle the hold and hand the usage event over — once per request id."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import hiredis

from contracts.keyrecord import KeyRecord
from contracts.usage import UsageEvent
from routing.gateway import Gateway
from routing.handoff.call import Call
from routing.handoff.emit import build_event, emit_again, rejected_event, submit_event
from routing.handoff.end_state import end_state, final_bill
from routing.http.errors import GatewayError
from routing.limits.admission import Admission, settle
from routing.redis.pipe import RedisUnavailable

log = logging.getLogger("routing.handlers.accounting")


async def account(gateway: Gateway, call: Call) -> None:
    """One event per call. A refusal before admission (``rejected``) held nothing: its event goes
    out in the same pipelined round trip and there is nothing to settle. A client gone while admission
    ran has its admission awaited and settled now (nothing charged), not left to the hold reaper. A call
    that ended before admission without being refused (client gone, internal error) leaves no trace."""
    state = end_state(call)  # before a departed client's admission is filled in
    if call.admission is None:
        call.admission = await _admission_of_departed(call)
    if call.admission is None:
        if call.status == "rejected":
            await hand_over(gateway, build_event(call, call.bill(), gateway.config.region, state))
        return
    if call.early is not None:  # built just before the last byte: settle what that event books
        event, pending = call.early
    else:
        event = build_event(call, final_bill(call, state), gateway.config.region, state)
        pending = submit_event(gateway.redis, event, gateway.config.generation_ttl_s)
    if call.complete and call.offering is not None and call.fingerprint is not None:
        gateway.affinity.remember_local(call.fingerprint, call.offering.offering_id, call.offering.cache_ttl_s)
        pending.append(gateway.affinity.submit(call.fingerprint, call.offering.offering_id, call.offering.cache_ttl_s))
    try:
        await settle(
            gateway.redis,
            call.admission,
            charge_micros=event.charge_micros,
            tokens_used=event.tokens.input_total + event.tokens.output,
        )
        for future in pending:
            await future
    except (RedisUnavailable, hiredis.ReplyError) as exc:
        # The hold stays open in Redis (the reaper frees it at expiry); the event must not be lost. A refused
        # command (a full Redis, a stream key of the wrong type) loses nothing either: it goes the same way.
        log.warning("accounting of %s retried after: %s", call.request_id, exc)
        for future in pending:  # failed with the same connection: their errors are this one
            future.add_done_callback(_retrieve)
        await emit_or_spool(gateway, event)


async def _admission_of_departed(call: Call) -> Admission | None:
    """The client left while admission ran: one Redis round trip to learn what it took (the script ran
    or will run on the same connection), so the hold is released now."""
    if call.admitting is None or not call.client_gone:
        return None
    try:
        return await call.admitting
    except (GatewayError, RedisUnavailable):  # refused, or the store is down: nothing was held here
        return None


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def hand_off_early(gateway: Gateway, call: Call) -> None:
    """Before an answer's last byte: queue its usage event and give the loop one turn, which writes
    it to Redis (with whatever else this tick queued) before the caller can have the whole answer.
    No extra round trip: ``account`` awaits these replies with the settlement's."""
    state = end_state(call)
    event = build_event(call, final_bill(call, state), gateway.config.region, state)
    call.early = (event, submit_event(gateway.redis, event, gateway.config.generation_ttl_s))
    await asyncio.sleep(0)


async def account_unread(
    gateway: Gateway,
    *,
    request_id: str,
    record: KeyRecord,
    dialect: str,
    body: dict[str, Any] | None,
    err: GatewayError,
    started: float,
) -> None:
    """A known key's call refused while its body was read (invalid JSON or shape, too large): ``rejected``."""
    model = body.get("model") if body else None
    event = rejected_event(
        request_id=request_id, record=record, dialect=dialect, model=model if isinstance(model, str) else "",
        status=err.status, code=err.code, region=gateway.config.region, started=started,
    )  # fmt: skip
    await hand_over(gateway, event)


async def hand_over(gateway: Gateway, event: UsageEvent) -> None:
    """Only the event (XADD and the generation copy, pipelined): for calls that held nothing."""
    try:
        for future in submit_event(gateway.redis, event, gateway.config.generation_ttl_s):
            await future
    except (RedisUnavailable, hiredis.ReplyError) as exc:
        log.warning("usage event of %s retried after: %s", event.request_id, exc)
        await emit_or_spool(gateway, event)


async def emit_or_spool(gateway: Gateway, event: UsageEvent) -> None:
    """One more try on a fresh connection, else the local spool (replayed when Redis is back). Redis not
    taking it is remembered (``spool.redis_failing``): with the spool unwritable too, new paid calls are
    refused until one of them takes usage again (routing.handlers.completions)."""
    try:
        await emit_again(gateway.redis, event, gateway.config.generation_ttl_s)
    except (RedisUnavailable, hiredis.ReplyError) as exc:
        log.warning("usage event of %s spooled: %s", event.request_id, exc)
        gateway.spool.redis_failing = True
        gateway.spool.append(event.to_json())
