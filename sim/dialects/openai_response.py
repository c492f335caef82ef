"""OpenAI Chat Completions responses: the JSON body and the SSE frames of a stream.

Stream quirks per usage dialect: ``moonshot`` puts ``usage`` inside the finishing choice,
``zhipu`` puts it on the finishing chunk; every dialect adds the standard trailing
``choices: []`` usage chunk when ``stream_options.include_usage`` is set (except zhipu,
whose finishing chunk already carries it).
"""

from __future__ import annotations

from typing import Any

import orjson

from contracts.tokens import count_text_tokens
from sim.completion import Completion
from sim.context import Exchange
from sim.dialects.usage_shapes import usage_object
from sim.pacing import piece_tokens

Frames = list[tuple[int, bytes]]  # (output tokens carried, bytes)
_FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls"}
_ARG_PIECE = 12


def _usage(x: Exchange) -> dict[str, Any]:
    cost = x.billed_cost_micros / 1_000_000 if x.offering.profile.report_cost else None
    return usage_object(x.offering.spec.usage_dialect, x.usage, cost)


def _message(x: Exchange) -> dict[str, Any]:
    completion = x.completion
    message: dict[str, Any] = {
        "role": "assistant",
        "content": completion.text if not completion.tool_calls else None,
        "refusal": None,
    }
    field = x.offering.profile.reasoning_field
    if completion.reasoning_pieces and field:
        message[field] = completion.reasoning_text
    if completion.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in completion.tool_calls
        ]
    return message


def body(x: Exchange) -> bytes:
    return orjson.dumps(
        {
            "id": x.response_id,
            "object": "chat.completion",
            "created": x.created,
            "model": x.model,
            "choices": [
                {"index": 0, "message": _message(x), "logprobs": None, "finish_reason": _FINISH[x.completion.finish]}
            ],
            "usage": _usage(x),
            "system_fingerprint": "fp_sim0001",
        }
    )


class _Chunker:
    def __init__(self, x: Exchange) -> None:
        head = {
            "id": x.response_id,
            "object": "chat.completion.chunk",
            "created": x.created,
            "model": x.model,
            "system_fingerprint": "fp_sim0001",
        }
        self.prefix = b"data: " + orjson.dumps(head)[:-1] + b',"choices":[{"index":0,"delta":'
        tail = ',"usage":null' if x.include_usage else ""
        self.suffix = b',"logprobs":null,"finish_reason":null}]' + tail.encode() + b"}\n\n"
        self.head = head

    def delta(self, delta: dict[str, Any]) -> bytes:
        return self.prefix + orjson.dumps(delta) + self.suffix

    def raw(self, chunk: dict[str, Any]) -> bytes:
        return b"data: " + orjson.dumps({**self.head, **chunk}) + b"\n\n"


def _content_frames(chunker: _Chunker, completion: Completion, reasoning_field: str | None) -> Frames:
    frames: Frames = []
    if reasoning_field:
        pieces = completion.reasoning_pieces
        frames += [
            (tokens, chunker.delta({"content": None, reasoning_field: piece}))
            for tokens, piece in zip(piece_tokens(pieces), pieces, strict=True)
        ]
    elif completion.reasoning_tokens:
        # Hidden reasoning still takes time: its first token is produced at TTFT (with the role chunk),
        # the rest at the drawn speed, all before the answer; nothing of it is sent.
        frames.append((1, b""))
        if completion.reasoning_tokens > 1:
            frames.append((completion.reasoning_tokens - 1, b""))
    for index, call in enumerate(completion.tool_calls):
        start = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        frames.append((count_text_tokens(call.name), chunker.delta({"tool_calls": [start]})))
        args = [call.arguments[at : at + _ARG_PIECE] for at in range(0, len(call.arguments), _ARG_PIECE)]
        frames += [
            (tokens, chunker.delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
            for tokens, piece in zip(piece_tokens(args), args, strict=True)
        ]
    pieces = completion.pieces
    frames += [
        (tokens, chunker.delta({"content": piece})) for tokens, piece in zip(piece_tokens(pieces), pieces, strict=True)
    ]
    return frames


def frames(x: Exchange) -> tuple[Frames, int]:
    """SSE frames, and how many trailing frames are the 'final' ones a cut stream loses."""
    chunker = _Chunker(x)
    dialect = x.offering.spec.usage_dialect
    out: Frames = [(0, chunker.delta({"role": "assistant", "content": "", "refusal": None}))]
    out += _content_frames(chunker, x.completion, x.offering.profile.reasoning_field)
    choice: dict[str, Any] = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": _FINISH[x.completion.finish]}
    finish: dict[str, Any] = {"choices": [choice]}
    if dialect == "moonshot":
        choice["usage"] = _usage(x)
    if dialect == "zhipu":
        finish["usage"] = _usage(x)
    elif x.include_usage:
        finish["usage"] = None
    tail = [(0, chunker.raw(finish))]
    if x.include_usage and dialect != "zhipu":
        tail.append((0, chunker.raw({"choices": [], "usage": _usage(x)})))
    tail.append((0, b"data: [DONE]\n\n"))
    return out + tail, len(tail)
