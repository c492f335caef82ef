"""OpenAI embeddings, as the probes speak them: POST {base}/embeddings with the official Python SDK's
headers and its default ``encoding_format: base64``; the answer's vectors decoded and checked, its usage
read by the reader billing uses (contracts.provider_usage) with no output side."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from contracts.snapshot import OfferingSnapshot
from evaluation.wire.base import Usage, WireError, read_usage
from evaluation.wire.sdk_headers import openai_headers


@dataclass(frozen=True, slots=True)
class Vectors:
    count: int
    dimensions: int


def build(offering: OfferingSnapshot, inputs: list[str], api_key: str) -> tuple[str, dict[str, str], dict[str, Any]]:
    """URL, headers and body of the request the official SDK sends for ``embeddings.create(input=[...])``."""
    body = {"model": offering.upstream_model, "input": inputs, "encoding_format": "base64"}
    return f"{offering.base_url.rstrip('/')}/embeddings", openai_headers(api_key), body


def _length(item: Any, index: int) -> int:
    """How many values the embedding of input ``index`` has (base64 float32 decoded, or a list of numbers)."""
    if not isinstance(item, dict) or item.get("index") != index:
        raise WireError(f"data[{index}] is not the embedding of input {index}")
    raw = item.get("embedding")
    if isinstance(raw, list) and all(isinstance(x, int | float) and not isinstance(x, bool) for x in raw):
        return len(raw)  # a provider that ignores encoding_format sends floats
    if not isinstance(raw, str):
        raise WireError(f"data[{index}].embedding is neither base64 nor a list of numbers")
    try:
        packed = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WireError(f"data[{index}].embedding is not base64: {exc}") from exc
    if not packed or len(packed) % 4:
        raise WireError(f"data[{index}].embedding is not a whole number of float32 values")
    return len(packed) // 4


def vectors(data: dict[str, Any], inputs: int) -> Vectors:
    """One vector per input, in order, all of one length; anything else is a WireError. (Their norm is not
    judged: OpenAI's are unit length, but a provider of another model need not normalise.)"""
    items = data.get("data")
    if not isinstance(items, list) or len(items) != inputs:
        raise WireError(f"expected {inputs} embeddings, got {len(items) if isinstance(items, list) else 'none'}")
    lengths = set()
    for index, item in enumerate(items):
        lengths.add(_length(item, index))
    if len(lengths) != 1:
        raise WireError(f"embeddings of different lengths: {sorted(lengths)}")
    return Vectors(count=inputs, dimensions=lengths.pop())


def usage(offering: OfferingSnapshot, raw: Any) -> Usage:
    """Input tokens as billing reads them; an embedding has no output side, so a missing
    ``completion_tokens`` is 0 (one that is present is checked like any other count)."""
    if not isinstance(raw, dict):
        raise WireError("usage is missing or not an object")
    return read_usage(offering, {"completion_tokens": 0, **raw})
