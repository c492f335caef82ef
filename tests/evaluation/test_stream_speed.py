"""The speed rule on hand-made arrival times, and the reasoning deltas each wire dialect reads."""

from __future__ import annotations

import pytest

from evaluation.probes.speed import HIDDEN, NONE, STREAMED, Arrivals, stream_speed
from evaluation.wire import dialect_for

WORD = "abcd"  # one token (contracts.tokens: 4 ASCII characters)


def _arrivals(*deltas: tuple[float, str, str]) -> Arrivals:
    arrivals = Arrivals()
    for now, reasoning, text in deltas:
        arrivals.add(now, reasoning=reasoning, text=text)
    return arrivals


def test_streamed_reasoning_starts_the_clock_and_counts_in_the_speed():
    # 1 reasoning token at 1.0 s, 9 more by 1.9 s, then 10 answer tokens by 2.9 s: 100 tok/s throughout
    deltas = [(1.0 + i * 0.1, WORD, "") for i in range(10)] + [(2.0 + i * 0.1, "", WORD) for i in range(10)]
    speed = stream_speed(_arrivals(*deltas), started=0.0, output_tokens=20, reasoning_tokens=10)
    assert speed.reasoning == STREAMED
    assert speed.ttft_ms == pytest.approx(1000) and speed.answer_ttft_ms == pytest.approx(2000)
    assert speed.tps == pytest.approx(19 / 1.9)


def test_hidden_reasoning_is_timed_from_the_usage_at_the_answers_speed():
    # 10 hidden reasoning tokens, then the answer: 1 token at 2.0 s, 1 more every 0.1 s (10 tok/s)
    deltas = [(2.0 + i * 0.1, "", WORD) for i in range(11)]
    speed = stream_speed(_arrivals(*deltas), started=0.0, output_tokens=21, reasoning_tokens=10)
    assert speed.reasoning == HIDDEN and speed.answer_ttft_ms == pytest.approx(2000)
    assert speed.tps == pytest.approx(10)
    # after the first token: 9 more reasoning tokens and the first answer token, at 10 tok/s, before 2.0 s
    assert speed.ttft_ms == pytest.approx(1000)


def test_hidden_reasoning_ttft_stays_within_the_request():
    deltas = [(2.0 + i * 0.01, "", WORD) for i in range(11)]  # 100 tok/s: 50 tokens took 0.5 s
    speed = stream_speed(_arrivals(*deltas), started=0.0, output_tokens=61, reasoning_tokens=50)
    assert speed.ttft_ms == pytest.approx(1500)
    slow = [(0.2 + i * 0.1, "", WORD) for i in range(11)]  # "reasoning" longer than the wait: clamped to 0
    assert stream_speed(_arrivals(*slow), started=0.0, output_tokens=61, reasoning_tokens=50).ttft_ms == 0.0


def test_one_delta_hidden_answer_has_no_speed_and_its_answer_ttft_bounds_the_ttft():
    speed = stream_speed(_arrivals((2.0, "", WORD * 5)), started=0.0, output_tokens=55, reasoning_tokens=50)
    assert speed.tps is None and speed.ttft_ms == speed.answer_ttft_ms == pytest.approx(2000)


def test_without_reasoning_both_first_tokens_are_one():
    deltas = [(1.0 + i * 0.1, "", WORD) for i in range(11)]
    speed = stream_speed(_arrivals(*deltas), started=0.0, output_tokens=11, reasoning_tokens=0)
    assert speed.reasoning == NONE and speed.ttft_ms == speed.answer_ttft_ms == pytest.approx(1000)
    assert speed.tps == pytest.approx(10)


def test_openai_dialect_reads_reasoning_content_and_reasoning():
    dialect = dialect_for("openai")
    for name in ("reasoning_content", "reasoning"):
        delta = dialect.stream_delta("", {"choices": [{"delta": {"content": None, name: "hmm"}}]})
        assert (delta.reasoning, delta.text) == ("hmm", "")


def test_anthropic_dialect_reads_thinking_deltas():
    dialect = dialect_for("anthropic")
    thinking = {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}}
    text = {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}}
    assert (dialect.stream_delta("", thinking).reasoning, dialect.stream_delta("", text).text) == ("hmm", "Hi")
