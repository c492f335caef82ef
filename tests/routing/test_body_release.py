"""An open stream does not keep its request: once an offering answers, the parsed body (an agent's whole
conversation) is let go, so a stream's memory is not its prompt's size for as long as it lasts."""

from __future__ import annotations

import pytest

from routing.handoff.call import Call
from tests.routing.open_stream import live, open_stream

PROMPT = "Every rule of the ledger, with an example for each, written out in full. " * 3000  # ~220 KB


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
def test_an_open_stream_holds_no_request_body(patient_gateway, sim, tenant, path, body):
    with open_stream(patient_gateway, sim, tenant.key, path, body) as response:
        chunks = response.iter_content(chunk_size=None)
        next(chunks)  # the first bytes are here; the stream is still open
        request_id = response.headers["x-request-id"]
        [call] = [c for c in live(Call)[Call] if c.request_id == request_id]
        assert call.body == {}
        assert call.view.forward is None
        assert call.view.input_estimate > 40_000  # what the body was: the call still knows its size
        rest = b"".join(chunks)
    assert rest  # the answer went on after the body was let go
    [event] = tenant.wait_events(1)
    assert event["end_state"] == "completed", event
