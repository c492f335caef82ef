"""What an open stream keeps while it relays: only what the relay and the settlement still need. The
upstream's headers, the request sent (our provider key in its headers) and the admission's task were
needed up to the first byte; holding them as long as the stream multiplied by every open stream."""

from __future__ import annotations

from types import CoroutineType

from routing.handlers.completions import serve
from routing.handoff.call import Call
from routing.router.route import Route
from routing.upstream.attempt import Opened
from tests.routing.open_stream import live, open_stream
from tests.waiting import wait_until

BODY = {"model": "gpt-4.1-mini", "max_tokens": 400, "stream": True, "messages": [{"role": "user", "content": "go"}]}


def _heap_mid_stream(server, sim, tenant, *kinds: type) -> tuple[Call, dict[type, list]]:
    """The open stream's call and the live objects of ``kinds``, found while the stream is open; the
    answer then goes on to its end."""
    with open_stream(server, sim, tenant.key, "/v1/chat/completions", BODY) as response:
        chunks = response.iter_content(chunk_size=None)
        next(chunks)
        found = live(Call, *kinds)
        [call] = [c for c in found[Call] if c.request_id == response.headers["x-request-id"]]
        rest = b"".join(chunks)
    assert b"[DONE]" in rest  # the answer went on to its end after what was let go
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "completed", event
    return call, found


def test_an_open_stream_holds_no_request_or_upstream_headers(patient_gateway, sim, tenant):
    call, found = _heap_mid_stream(patient_gateway, sim, tenant, Opened)
    assert call.headers == {}  # the caller's, its API key among them
    [opened] = [
        o
        for o in found[Opened]
        if o.response.status == 200 and o.response.request_info.url.path.endswith("/chat/completions")
    ]
    assert dict(opened.response.headers) == {}
    assert opened.response.raw_headers == ()
    assert dict(opened.response.request_info.headers) == {}  # the provider key went with them


def _awaiting_chain(request_id: str) -> list[str]:
    """The qualified names of the coroutines awaiting one another from the call's ``serve`` down, once
    none of them is running (the gateway's thread may be mid-step while the first half streams);
    [] while one is."""
    found = live(Call, CoroutineType)
    [call] = [c for c in found[Call] if c.request_id == request_id]
    assert call.admission is not None and call.admitting is None
    coroutines = found[CoroutineType]
    serving = [
        c
        for c in coroutines
        if c.cr_code is serve.__code__ and c.cr_frame is not None and c.cr_frame.f_locals.get("call") is call
    ]
    outer = [c for c in coroutines if serving and c.cr_await is serving[0]]
    if len(serving) != 1 or len(outer) != 1:
        return []
    chain, step = [outer[0].cr_code.co_qualname], serving[0]
    while type(step) is CoroutineType:
        if step.cr_running:
            return []
        chain.append(step.cr_code.co_qualname)
        step = step.cr_await
    return chain


def test_an_open_stream_awaits_through_one_frame_per_layer_and_keeps_no_admission_task(patient_gateway, sim, tenant):
    with open_stream(patient_gateway, sim, tenant.key, "/v1/chat/completions", BODY) as response:
        chunks = response.iter_content(chunk_size=None)
        next(chunks)
        request_id = response.headers["x-request-id"]
        chain = wait_until(lambda: _awaiting_chain(request_id), timeout=1.5, message="the stream's coroutines at rest")
        b"".join(chunks)
    # Routing, admission and the disconnect watch hold no frame of their own while the answer streams.
    assert chain[:4] == ["_observed", "serve", "Forwarder.run", "relay_stream"], chain


def test_an_open_stream_keeps_its_route_explanation_not_the_routing_decision(patient_gateway, sim, tenant):
    with open_stream(patient_gateway, sim, tenant.key, "/v1/chat/completions", BODY) as response:
        chunks = response.iter_content(chunk_size=None)
        next(chunks)
        request_id = response.headers["x-request-id"]
        # The explanation is built by a loop callback just after the first bytes: give it that moment,
        # well inside the provider's 2 s pause, and the scored candidates must be gone.
        wait_until(lambda: not live(Route)[Route], timeout=1.5, message="the routing decision let go mid-stream")
        [call] = [c for c in live(Call)[Call] if c.request_id == request_id]
        explained = call.route_candidates
        b"".join(chunks)
    [event] = tenant.wait_events(1)
    assert [c["verdict"] for c in event["route_candidates"]][:1] == ["winner"]
    assert [c["provider"] for c in event["route_candidates"]] == [c.provider for c in explained]
