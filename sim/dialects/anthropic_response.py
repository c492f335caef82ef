"""Anthropic Messages responses: the JSON message and the SSE event sequence.

message_start (usage: input_tokens excludes cache reads/writes) -> per block
content_block_start, ping after the first, deltas (thinking_delta + signature_delta,
text_delta, input_json_delta), content_block_stop -> message_delta (stop_reason and
cumulative usage) -> message_stop.
"""

from __future__ import annotations

from typing import Any

import orjson

from contracts.tokens import count_text_tokens
from sim.context import Exchange
from sim.pacing import piece_tokens

Frames = list[tuple[int, bytes]]
_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
_JSON_PIECE = 12
_SIGNATURE = "c2ltdWxhdGVkLXRoaW5raW5nLXNpZ25hdHVyZQ=="


def usage(x: Exchange, *, output_tokens: int) -> dict[str, Any]:
    u = x.usage
    return {
        "input_tokens": u.input_uncached,
        "cache_creation_input_tokens": u.cache_write_5m + u.cache_write_1h,
        "cache_read_input_tokens": u.cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": u.cache_write_5m,
            "ephemeral_1h_input_tokens": u.cache_write_1h,
        },
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def _blocks(x: Exchange) -> list[dict[str, Any]]:
    completion = x.completion
    blocks: list[dict[str, Any]] = []
    if completion.reasoning_pieces:
        blocks.append({"type": "thinking", "thinking": completion.reasoning_text, "signature": _SIGNATURE})
    for call in completion.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": orjson.loads(call.arguments)})
    if not completion.tool_calls:
        blocks.append({"type": "text", "text": completion.text})
    return blocks


def _message(x: Exchange, content: list[dict[str, Any]], stop: str | None, output_tokens: int) -> dict[str, Any]:
    return {
        "id": x.response_id,
        "type": "message",
        "role": "assistant",
        "model": x.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage(x, output_tokens=output_tokens),
    }


def body(x: Exchange) -> bytes:
    return orjson.dumps(_message(x, _blocks(x), _STOP[x.completion.finish], x.usage.output))


def _event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def _block_frames(index: int, block: dict[str, Any], x: Exchange) -> Frames:
    kind = block["type"]
    start: dict[str, Any]
    if kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        pieces = x.completion.reasoning_pieces
        body = [
            (tokens, _delta(index, {"type": "thinking_delta", "thinking": p}))
            for tokens, p in zip(piece_tokens(pieces), pieces, strict=True)
        ]
        body.append((0, _delta(index, {"type": "signature_delta", "signature": _SIGNATURE})))
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        text = orjson.dumps(block["input"]).decode()
        pieces = [text[i : i + _JSON_PIECE] for i in range(0, len(text), _JSON_PIECE)]
        body = [
            (tokens, _delta(index, {"type": "input_json_delta", "partial_json": p}))
            for tokens, p in zip(piece_tokens(pieces), pieces, strict=True)
        ]
    else:
        start = {"type": "text", "text": ""}
        pieces = x.completion.pieces
        body = [
            (tokens, _delta(index, {"type": "text_delta", "text": p}))
            for tokens, p in zip(piece_tokens(pieces), pieces, strict=True)
        ]
    opening = _event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
    closing = _event("content_block_stop", {"type": "content_block_stop", "index": index})
    name_tokens = count_text_tokens(block["name"]) if kind == "tool_use" else 0  # the tool name is output too
    return [(name_tokens, opening), *body, (0, closing)]


def frames(x: Exchange) -> tuple[Frames, int]:
    out: Frames = [(0, _event("message_start", {"type": "message_start", "message": _message(x, [], None, 1)}))]
    for index, block in enumerate(_blocks(x)):
        out += _block_frames(index, block, x)
        if index == 0:
            out.insert(2, (0, _event("ping", {"type": "ping"})))
    delta_usage = usage(x, output_tokens=x.usage.output)
    del delta_usage["cache_creation"], delta_usage["service_tier"]
    tail = [
        (
            0,
            _event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": _STOP[x.completion.finish], "stop_sequence": None},
                    "usage": delta_usage,
                },
            ),
        ),
        (0, _event("message_stop", {"type": "message_stop"})),
    ]
    return out + tail, len(tail)
