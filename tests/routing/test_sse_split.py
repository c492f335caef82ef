"""A read that is exactly one SSE event (a paced stream's token) gives the same event as the general
split: same name, data and raw bytes forwarded, whatever its line ends, names or spacing."""

from __future__ import annotations

import itertools

import pytest

from routing.http.sse import SseEvent, SseSplitter

ONE_EVENT_READS = [
    b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n',
    b"data: [DONE]\n\n",
    b"data: \n\n",
    b"data:{}\n\n",
    b'event: content_block_delta\ndata: {"type":"content_block_delta"}\n\n',
    b"event:ping\ndata: {}\n\n",
    b"event:  spaced  \ndata: x\n\n",
    b"event: message_stop\n\n",
    b"data: a\r\n\r\n",
    b"event: x\r\ndata: y\r\n\r\n",
    b"event: x\ndata: y\r\n\n",
    b"data: a\rb\n\n",
    b"data: a\ndata: b\n\n",
    b": comment\n\n",
    b"id: 7\ndata: z\n\n",
]


def _general(read: bytes) -> tuple[list[SseEvent], bytes]:
    """The same bytes split through the buffered path: the first byte alone, then the rest."""
    splitter = SseSplitter()
    events = splitter.feed(read[:1]) + splitter.feed(read[1:])
    return events, splitter.rest()


@pytest.mark.parametrize("read", ONE_EVENT_READS)
def test_a_read_with_one_event_splits_as_the_general_path(read: bytes) -> None:
    splitter = SseSplitter()
    assert (splitter.feed(read), splitter.rest()) == _general(read)


def test_line_ends_are_normalised_in_the_forwarded_bytes() -> None:
    (event,) = SseSplitter().feed(b"event: x\r\ndata: y\r\n\r\n")
    assert (event.event, event.data, event.raw) == (b"x", b"y", b"event: x\ndata: y\n\n")


def test_every_short_mix_of_sse_pieces_splits_as_the_general_path() -> None:
    pieces = [b"data: ", b"event:", b"x", b"\n", b"\r", b"\n\n", b" "]
    checked = 0
    for size in range(1, 5):
        for combo in itertools.product(pieces, repeat=size):
            read = b"".join(combo)
            splitter = SseSplitter()
            assert (splitter.feed(read), splitter.rest()) == _general(read), read
            checked += 1
    assert checked == 7 + 49 + 343 + 2401
