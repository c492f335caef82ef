"""Constant memory per stream: delivered text is counted as it passes, never kept.

The estimate from the running counts equals ``count_text_tokens`` of the whole delivered text
(escapes, non-ASCII, tool arguments, chunks batched in one read), and a 10,000-chunk stream
through the converters the relay uses retains no more than a short one.
"""

from __future__ import annotations

import gc
import os
import tracemalloc

import orjson
import pytest

from contracts.tokens import count_text_tokens
from routing.http.sse import SseSplitter
from routing.translate.model_field import Renamed
from routing.translate.stream_anthropic import AnthropicPassthrough
from routing.translate.stream_openai import OpenAIPassthrough, OpenAIToAnthropic
from routing.usage.tracker import UsageTracker

TEXTS = [
    "Hello",
    ' "quoted" and \\ slash',
    "line\nbreak\ttab",
    "日本語のテキスト",
    "emoji 🙂 mixed",
    '"content": "not a key"',
    "",
]


def _openai_chunk(i: int, text: str | None = None, args: str | None = None) -> bytes:
    delta: dict[str, object] = {"content": text}
    if args is not None:
        delta = {"tool_calls": [{"index": 0, "function": {"arguments": args}}]}
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "upstream-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        "usage": None,
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _anthropic_delta(text: str, kind: str = "text_delta", key: str = "text") -> bytes:
    event = {"type": "content_block_delta", "index": 0, "delta": {"type": kind, key: text}}
    return b"event: content_block_delta\ndata: " + orjson.dumps(event) + b"\n\n"


def _feed(converter: object, chunks: list[bytes]) -> bytes:
    splitter = SseSplitter()
    out = b""
    for chunk in chunks:
        for event in splitter.feed(chunk):
            out += converter.feed(event)  # type: ignore[attr-defined]
    return out


def test_openai_byte_scan_counts_what_parsing_would():
    tracker = UsageTracker(input_estimate=0)
    chunks = [_openai_chunk(i, t) for i, t in enumerate(TEXTS)] + [_openai_chunk(99, args='{"city": "Paris \\u00e9"}')]
    passthrough = Renamed(OpenAIPassthrough(tracker, dict, client_wants_usage=False), "catalog-model")
    out = _feed(passthrough, [b"".join(chunks[:3]), *chunks[3:]])  # several events in one read, too
    expected = "".join(TEXTS) + '{"city": "Paris \\u00e9"}'
    assert tracker.output_estimate() == count_text_tokens(expected)
    assert out.count(b'"model":"catalog-model"') == len(chunks)


def test_null_content_and_role_chunks_count_nothing():
    tracker = UsageTracker(input_estimate=0)
    tracker.delivered_openai(b'{"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}')
    tracker.delivered_openai(b'{"choices":[{"index":0,"delta":{"content": "spaced"}}]}')
    assert tracker.output_estimate() == count_text_tokens("spaced")


def test_anthropic_deltas_count_text_json_and_thinking():
    tracker = UsageTracker(input_estimate=0)
    events = [_anthropic_delta(t) for t in TEXTS]
    events.append(_anthropic_delta('{"a": "b"}', "input_json_delta", "partial_json"))
    events.append(_anthropic_delta("hmm, ünïcode", "thinking_delta", "thinking"))
    _feed(AnthropicPassthrough(tracker, dict), events)
    assert tracker.output_estimate() == count_text_tokens("".join(TEXTS) + '{"a": "b"}' + "hmm, ünïcode")


def _retained_after(converter_factory, chunk_factory, n: int) -> int:
    """Bytes the stream code still holds after feeding ``n`` chunks to a fresh converter (it stays alive)."""
    gc.collect()
    tracemalloc.start()
    try:
        converter = converter_factory()
        splitter = SseSplitter()
        for i in range(n):
            for event in splitter.feed(chunk_factory(i)):
                converter.feed(event)
        gc.collect()
        # Only what the stream code allocated: gateways other tests left running in this process allocate
        # in routing/ too (their sharing and spool-replay loops run every second), never in these files.
        stream_code = [
            tracemalloc.Filter(True, os.path.join("*", *parts))
            for parts in (
                ("routing", "translate", "*"), ("routing", "wire", "sse.py"), ("routing", "usage", "tracker.py"),
                ("routing", "usage", "answer_facts.py"), ("contracts", "tokens.py"), ("contracts", "provider_usage.py"),
            )
        ]  # fmt: skip
        retained = tracemalloc.take_snapshot().filter_traces(stream_code)
        assert converter.tracker.output_estimate() > 0
        return sum(stat.size for stat in retained.statistics("filename"))
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("name", "factory", "chunk"),
    [
        (
            "openai passthrough",
            lambda: Renamed(OpenAIPassthrough(UsageTracker(0), dict, client_wants_usage=True), "m"),
            lambda i: _openai_chunk(i, f"token{i} "),
        ),
        (
            "anthropic passthrough",
            lambda: Renamed(AnthropicPassthrough(UsageTracker(0), dict), "m"),
            lambda i: _anthropic_delta(f"token{i} "),
        ),
        (
            "openai to anthropic",
            lambda: OpenAIToAnthropic(UsageTracker(0), dict, message_id="msg_1", model="m"),
            lambda i: _openai_chunk(i, f"token{i} "),
        ),
    ],
)
def test_a_long_stream_retains_no_more_than_a_short_one(name, factory, chunk):
    short = _retained_after(factory, chunk, 100)
    long = _retained_after(factory, chunk, 10_000)
    # Kept per chunk before: ~230 bytes, i.e. ~2.3 MB over 10,000 chunks. Now flat.
    assert long - short < 4_096, f"{name}: {long - short} bytes more after 10,000 chunks than after 100"
    assert long < 20_000, f"{name}: {long} bytes retained by one stream's converter"
