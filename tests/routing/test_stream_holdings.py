"""What an open stream keeps while it relays: only what the relay and the settlement still need. The
upstream's headers, the request sent (our provider key in its headers) and the admission's task were
needed up to the first byte; holding them as long as the stream multiplied by every open stream."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from types import CoroutineType

import requests

from routing.call import Call
from routing.failover.upstream import Opened
from routing.handlers.completions import serve
from routing.router.route import Route
from tests.routing.conftest import add_fault

BODY = {"model": "gpt-4.1-mini", "max_tokens": 400, "stream": True, "messages": [{"role": "user", "content": "go"}]}


def _live(kind: type, request_id: str | None = None) -> list:
    gc.collect()
    # type(), not isinstance(): the heap holds weak proxies whose referent is gone, and isinstance() on
    # one raises ReferenceError.
    found = [o for o in gc.get_objects() if type(o) is kind]
    if request_id is not None:
        found = [o for o in found if o.request_id == request_id]
    return found


@contextmanager
def _open_stream(gateway, sim, tenant) -> Iterator[str]:
    """A stream whose first bytes have arrived and whose rest is still to come (the provider pauses 1 s
    half-way, less than the idle gap); yields its request id."""
    add_fault(sim, provider="*", kind="stall_mid_stream", count=1, stall_s=200)
    with requests.post(
        f"{gateway.base_url}/v1/chat/completions",
        json=BODY,
        headers={"Authorization": f"Bearer {tenant.key}"},
        stream=True,
        timeout=30,
    ) as response:
        assert response.status_code == 200, response.text
        chunks = response.iter_content(chunk_size=None)
        next(chunks)
        yield response.headers["x-request-id"]
        rest = b"".join(chunks)
    assert b"[DONE]" in rest  # the answer went on to its end after what was let go
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "completed", event


def test_an_open_stream_holds_no_request_or_upstream_headers(gateway, sim, tenant):
    with _open_stream(gateway, sim, tenant) as request_id:
        [call] = _live(Call, request_id)
        assert call.headers == {}  # the caller's, its API key among them
        [opened] = [o for o in _live(Opened) if not o.response.closed]
        assert opened.response.status == 200
        assert dict(opened.response.headers) == {}
        assert opened.response.raw_headers == ()
        assert dict(opened.response.request_info.headers) == {}  # the provider key went with them
        assert opened.response.request_info.url.path.endswith("/chat/completions")


def _coroutines() -> list:
    gc.collect()
    return [o for o in gc.get_objects() if type(o) is CoroutineType]


def test_an_open_stream_awaits_through_one_frame_per_layer_and_keeps_no_admission_task(gateway, sim, tenant):
    with _open_stream(gateway, sim, tenant) as request_id:
        [call] = _live(Call, request_id)
        assert call.admission is not None and call.admitting is None
        coroutines = _coroutines()
        running = [c for c in coroutines if c.cr_code is serve.__code__ and c.cr_frame is not None]
        [serving] = [c for c in running if c.cr_frame.f_locals.get("call") is call]
        [outer] = [c for c in coroutines if c.cr_await is serving]
        chain, step = [outer.cr_code.co_qualname], serving
        while type(step) is CoroutineType:
            chain.append(step.cr_code.co_qualname)
            step = step.cr_await
    # Routing, admission and the disconnect watch hold no frame of their own while the answer streams.
    assert chain[:4] == ["_observed", "serve", "Forwarder.run", "relay_stream"], chain


def test_an_open_stream_keeps_its_route_explanation_not_the_routing_decision(gateway, sim, tenant):
    with _open_stream(gateway, sim, tenant) as request_id:
        [call] = _live(Call, request_id)
        assert _live(Route) == []  # the scored candidates went once the explanation was built
        explained = call.route_candidates
    [event] = tenant.events()
    assert [c["verdict"] for c in event["route_candidates"]][:1] == ["winner"]
    assert [c["provider"] for c in event["route_candidates"]] == [c.provider for c in explained]
