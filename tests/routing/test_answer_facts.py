"""The generation facts read off the wire (routing/usage/answer_facts.py), per dialect and shape."""

from __future__ import annotations

import orjson

from contracts.tokens import count_text_tokens
from contracts.usage import Prices, Tokens
from routing.http.sse import SseSplitter
from routing.usage.answer_facts import AnswerFacts, with_thinking

THOUGHT = "Caches keep a prefix; the second call reads it. Hmm — 缓存."


def _events(*payloads: dict[str, object], name: bytes | None = None) -> list:
    raw = b"".join(
        (b"event: " + name + b"\n" if name else b"") + b"data: " + orjson.dumps(p) + b"\n\n" for p in payloads
    )
    return SseSplitter().feed(raw)


def test_an_openai_stream_gives_its_id_and_finish_reason_and_no_thinking():
    facts = AnswerFacts()
    chunk = {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]}
    facts.observe(
        _events(chunk, {**chunk, "id": "chatcmpl-2", "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
    )
    assert (facts.upstream_id, facts.finish_reason, facts.thinking_tokens) == ("chatcmpl-1", "length", 0)


def test_kimi_reasoning_content_streamed_in_pieces_counts_as_one_text():
    facts = AnswerFacts()
    pieces = [THOUGHT[i : i + 7] for i in range(0, len(THOUGHT), 7)]
    facts.observe(_events(*({"id": "c", "choices": [{"delta": {"reasoning_content": p}}]} for p in pieces)))
    assert facts.thinking_tokens == count_text_tokens(THOUGHT)  # not the sum of rounded-up pieces


def test_an_anthropic_stream_gives_the_message_id_stop_reason_and_thinking():
    facts = AnswerFacts()
    facts.observe(
        _events(
            {"type": "message_start", "message": {"id": "msg_01", "usage": {"input_tokens": 3}}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": THOUGHT}},
            {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 9}},
        )
    )
    assert (facts.upstream_id, facts.finish_reason) == ("msg_01", "max_tokens")
    assert facts.thinking_tokens == count_text_tokens(THOUGHT)


def test_whole_answers_in_both_dialects():
    claude = AnswerFacts()
    claude.observe_answer(
        {"id": "msg_9", "stop_reason": "end_turn", "content": [{"type": "thinking", "thinking": THOUGHT}]}
    )
    assert (claude.upstream_id, claude.finish_reason, claude.thinking_tokens) == (
        "msg_9",
        "end_turn",
        count_text_tokens(THOUGHT),
    )
    chat = AnswerFacts()
    chat.observe_answer({"id": "chatcmpl-9", "choices": [{"message": {"content": "x"}, "finish_reason": "tool_calls"}]})
    assert (chat.upstream_id, chat.finish_reason, chat.thinking_tokens) == ("chatcmpl-9", "tool_calls", 0)


def test_thinking_becomes_reasoning_only_where_reasoning_is_billed_as_output():
    facts = AnswerFacts(thinking_ascii=400)  # 100 tokens
    tokens = Tokens(input_uncached=10, output=60)
    as_output = Prices(input=1, output=2)
    assert with_thinking(tokens, facts, as_output) == (
        Tokens(input_uncached=10, output=60, reasoning=60),
        ("reasoning_estimated",),
    )
    assert with_thinking(tokens, facts, Prices(input=1, output=2, reasoning=5)) == (tokens, ())  # would change the cost
    counted = Tokens(output=60, reasoning=7)
    assert with_thinking(counted, facts, as_output) == (counted, ())  # the provider's own count wins
