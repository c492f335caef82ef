"""The answer facts a generation record keeps (upstream id, finish reason, thinking) are the same
whether every relayed event is parsed or only those the byte scans let through."""

from __future__ import annotations

import itertools

import orjson
import pytest

from routing.http.sse import SseEvent
from routing.usage.answer_facts import AnswerFacts

EVENTS = [
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}], "usage": None},
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"reasoning_content": "think"}, "finish_reason": None}]},
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"reasoning": "ponder é"}}]},
    {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": '"stop_reason": x'}},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
]


def _encodings(event: object) -> list[bytes]:
    compact = orjson.dumps(event)
    spaced = compact.replace(b'":', b'": ').replace(b",", b", ")
    return [compact, spaced]


def _facts(events: list[bytes], *, parse_all: bool) -> AnswerFacts:
    facts = AnswerFacts()
    for data in events:
        if parse_all:
            facts._observe_chunk(data)
        else:
            facts.observe([SseEvent(None, data, b"data: " + data + b"\n\n")])
    return facts


@pytest.mark.parametrize("spaced", [False, True])
def test_scanned_stream_keeps_the_facts_of_a_fully_parsed_one(spaced: bool) -> None:
    events = [_encodings(e)[spaced] for e in EVENTS]
    for order in itertools.permutations(range(len(events)), 3):
        stream = [events[i] for i in order] + events
        assert _facts(stream, parse_all=False) == _facts(stream, parse_all=True)


def test_facts_of_a_mixed_stream() -> None:
    facts = _facts([_encodings(e)[0] for e in EVENTS], parse_all=False)
    assert (facts.upstream_id, facts.finish_reason) == ("chatcmpl-1", "end_turn")
    assert (facts.thinking_ascii, facts.thinking_other) == (len("think") + len("ponder ") + len("hmm"), 1)
