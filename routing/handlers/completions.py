"""``POST /v1/chat/completions`` and ``POST /v1/messages``: auth, admission, route, forward, account."""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import Any

from contracts.keyrecord import KeyRecord
from contracts.snapshot import OfferingSnapshot
from routing.cache_hygiene.fingerprint import anthropic_fingerprint, keyed_fingerprint, openai_fingerprint
from routing.gateway import Gateway
from routing.handlers import unexpected
from routing.handlers.accounting import account, account_unread, hand_off_early
from routing.handlers.disconnect import DisconnectWatch
from routing.handlers.intake import authenticate, new_request_id, parse_json, send_error
from routing.handoff.call import Call
from routing.handoff.call_span import describe_call
from routing.handoff.end_state import end_state
from routing.handoff.hold import call_hold
from routing.http.asgi_io import ClientGone, Receive, Scope, Send, end_stream, header_map, read_body
from routing.http.errors import GatewayError, store_unavailable, usage_unrecordable
from routing.limits.admission import admit
from routing.redis.pipe import RedisUnavailable
from routing.router import prefs as provider_prefs
from routing.router.auto import plan_auto, virtual_mode
from routing.router.candidates import Need
from routing.router.route import Route, check_model_scope, plan, resolve_model, route_mode
from routing.telemetry import tracing
from routing.usage.tracker import UsageTracker
from routing.wire.dialects import Dialect
from routing.wire.request import RequestView

AFFINITY_MIN_TOKENS = 1024  # providers cache prompts from about this size; below it affinity is moot


async def serve(gateway: Gateway, dialect: Dialect, scope: Scope, receive: Receive, send: Send) -> None:
    """The call's one frame of ours in this module for as long as it streams: what only the first byte
    needs (parsing, routing, admission) runs in calls that have returned by then."""
    call = await _accept(gateway, dialect, scope, receive, send)
    if call is None:
        return
    task = asyncio.current_task()
    assert task is not None
    watcher = DisconnectWatch(receive, call, task)
    try:
        offerings = await _prepare(gateway, call)
        await gateway.forwarder.run(call, offerings, send)
    except asyncio.CancelledError:
        if not call.client_gone:
            await _account(gateway, call)
            raise
        task.uncancel()
        call.status = "client_cancelled"
    except GatewayError as err:
        await _refuse(call, send, err)
    except RedisUnavailable:  # admission, affinity: limits and balance unknown, so nothing is forwarded
        await _refuse(call, send, store_unavailable())
    except Exception:  # noqa: BLE001 -- a bug must not strand the hold or lease: noted (logged, counted), answered
        await _refuse(call, send, unexpected.noted("POST", scope["path"], call.request_id))
    finally:
        watcher.cancel()
    await _account(gateway, call)


async def _accept(gateway: Gateway, dialect: Dialect, scope: Scope, receive: Receive, send: Send) -> Call | None:
    """Key and body: the call, or None once a refusal was answered (and accounted for a known key)."""
    request_id = new_request_id()
    headers = header_map(scope)
    record: KeyRecord | None = None
    body: dict[str, Any] | None = None
    started = time.time()
    try:
        record = await authenticate(gateway, headers)
        body = parse_json(await read_body(receive, gateway.config.max_body_bytes))
        view = dialect.view(body)
    except GatewayError as err:
        await send_error(send, dialect, err, request_id)
        if record is not None:  # an unknown key (401) belongs to no tenant: not recorded
            with tracing.span("usage hand-off"):
                await account_unread(
                    gateway, request_id=request_id, record=record, dialect=dialect.name, body=body, err=err,
                    started=started,
                )  # fmt: skip
        return None
    except ClientGone:
        return None
    forward = body if view.forward is None else view.forward  # Responses: already translated to chat
    call = Call(request_id, dialect, view, forward, headers, record, UsageTracker(view.input_estimate))
    # From here the call holds the request body alone, so Call.release_body frees it once an offering answers.
    body = view.forward = None
    del forward
    call.before_last_byte = tracing.traced_hand_off(partial(hand_off_early, gateway))
    return call


async def _account(gateway: Gateway, call: Call) -> None:
    describe_call(call, gateway.config.region, end_state)  # before settlement fills a departed client's admission
    with tracing.span("settlement"):
        await account(gateway, call)


async def _refuse(call: Call, send: Send, err: GatewayError) -> None:
    call.http_status, call.error_code = err.status, err.code
    call.status = "upstream_error" if call.attempts else "failed"
    if not call.attempts and call.admission is None and err.status != 500:
        call.status = "rejected"  # refused before anything was held or forwarded (limits, scope, model, ...)
    if not call.response_started:
        await send_error(send, call.dialect, err, call.request_id)
    elif err.status == 500:  # our failure mid-stream: the stream still ends, with an in-band error
        await end_stream(send, call.dialect.stream_error(err))


async def _prepare(gateway: Gateway, call: Call) -> list[OfferingSnapshot]:
    """Route and admit: the offerings to try, in order."""
    if gateway.spool.refusing:  # no call answered that could not be billed: one flag, no I/O
        raise usage_unrecordable()
    view, record = call.view, call.record
    auto = virtual_mode(view.model)  # "auto" / "auto:<mode>": the router picks the model too
    alias_reason = "" if auto is not None else _resolve(gateway, view, record)
    call.mode = route_mode(auto or call.headers.get("x-tokenway-route"), record)
    prefs = provider_prefs.parse(view.provider_prefs)
    need = Need(view.input_estimate, view.max_tokens, view.needs)
    if view.cache_key:
        call.fingerprint = keyed_fingerprint(record.tenant_id, view.model, view.cache_key)
    elif view.input_estimate >= AFFINITY_MIN_TOKENS:
        call.fingerprint = (anthropic_fingerprint if view.dialect == "anthropic" else openai_fingerprint)(
            call.body, record.tenant_id
        )
    affinity = await gateway.affinity.lookup(call.fingerprint) if call.fingerprint else None
    with tracing.span("routing decision"):
        route = _plan(gateway, call, need, prefs, affinity, auto=auto is not None)
    view.model = route.offerings[0].model  # auto: the chosen model names and bills the answer
    call.route_reason = f"{alias_reason};{route.reason}" if alias_reason else route.reason
    call.explain_route = route.candidates
    hold = max(call_hold(o, view, record) for o in route.offerings)
    reserve = view.input_estimate + min(view.max_tokens or 10**9, max(o.max_output for o in route.offerings))
    lifetime = gateway.config.deadline_s + gateway.config.hold_grace_s
    with tracing.span("admission"):
        call.admitting = asyncio.ensure_future(admit(
            gateway.redis, record, tokens=reserve, hold_micros=hold, lifetime_s=lifetime,
            rebuilding=gateway.keys.rebuilding,
        ))  # fmt: skip
        call.admission = await asyncio.shield(call.admitting)  # a disconnect here: accounting settles the hold at once
    call.admitting = None  # done: its task is not kept for the life of the stream
    return route.offerings


def _resolve(gateway: Gateway, view: RequestView, record: KeyRecord) -> str:
    """The catalog model routes, bills and names the answer from here on; returns the alias reason."""
    alias = resolve_model(gateway.catalog, view.model, family_fallback=record.model_family_fallback)
    view.model = alias.model
    check_model_scope(view.model, record)
    return alias.reason


def _plan(
    gateway: Gateway, call: Call, need: Need, prefs: provider_prefs.ProviderPrefs, affinity: int | None, *, auto: bool
) -> Route:
    if auto:
        return plan_auto(
            state=gateway.catalog, health=gateway.health, strategy=gateway.strategy, record=call.record, need=need,
            prefs=prefs, mode=call.mode, affinity=affinity, limits=gateway.limits,
        )  # fmt: skip
    return plan(
        state=gateway.catalog, health=gateway.health, strategy=gateway.strategy, record=call.record, model=call.view.model,
        need=need, prefs=prefs, mode=call.mode, affinity=affinity, limits=gateway.limits,
    )  # fmt: skip
