"""An open stream does not keep its request: once an offering answers, the parsed body (an agent's whole
conversation) is let go, so a stream's memory is not its prompt's size for as long as it lasts."""

from __future__ import annotations

import gc

import pytest
import requests

from routing.call import Call
from tests.routing.conftest import add_fault

PROMPT = "Every rule of the ledger, with an example for each, written out in full. " * 3000  # ~220 KB


def _open_call(request_id: str) -> Call:
    gc.collect()
    # type(), not isinstance(): the heap holds weak proxies whose referent is gone, and isinstance() on
    # one raises ReferenceError.
    found = [o for o in gc.get_objects() if type(o) is Call and o.request_id == request_id]
    assert len(found) == 1, "the stream's call should still be open"
    return found[0]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"model": "gpt-4.1-mini", "max_tokens": 400, "stream": True,
                                  "messages": [{"role": "system", "content": PROMPT}, {"role": "user", "content": "go"}]}),
        ("/v1/messages", {"model": "claude-haiku-4.5", "max_tokens": 400, "stream": True, "system": PROMPT,
                          "messages": [{"role": "user", "content": "go"}]}),
        ("/v1/responses", {"model": "gpt-4.1-mini", "max_output_tokens": 400, "stream": True, "instructions": PROMPT,
                           "input": "go"}),
    ],
)  # fmt: skip
def test_an_open_stream_holds_no_request_body(gateway, sim, tenant, path, body):
    # The provider pauses 1 s half-way (less than the idle gap): the stream is surely open while we look.
    add_fault(sim, provider="*", kind="stall_mid_stream", count=1, stall_s=200)
    with requests.post(
        f"{gateway.base_url}{path}",
        json=body,
        headers={"Authorization": f"Bearer {tenant.key}"},
        stream=True,
        timeout=30,
    ) as response:
        assert response.status_code == 200, response.text
        chunks = response.iter_content(chunk_size=None)
        next(chunks)  # the first bytes are here; the stream is still open
        call = _open_call(response.headers["x-request-id"])
        assert call.body == {}
        assert call.view.forward is None
        assert call.view.input_estimate > 40_000  # what the body was: the call still knows its size
        rest = b"".join(chunks)
    assert rest  # the answer went on after the body was let go
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "completed", event
