"""One request to an offering, measured: a streaming exchange or a plain one.

Failures raise ProbeFailure with the right error class; nothing else escapes
(broken JSON, truncated streams and odd usage are classified, never crash the batch).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from contracts.snapshot import OfferingSnapshot
from evaluation.models import ErrorClass
from evaluation.probes.availability import (
    ProbeFailure,
    classify_exception,
    classify_status,
    error_excerpt,
    rate_limit_headers,
)
from evaluation.wire import dialect_for
from evaluation.wire.base import ChatRequest, Reply, Usage, WireError
from evaluation.wire.sse import sse_events

PLACEHOLDER_KEY = "sk-tokenway-probe"  # used when the provider's key env var is unset (demo, simulator)


@dataclass(slots=True)
class Timed:
    reply: Reply
    usage: Usage
    total_ms: float
    http_status: int
    rate_limit: dict[str, str] = field(default_factory=dict)
    ttft_ms: float | None = None
    tps: float | None = None
    chunks: int = 0


def api_key(target: OfferingSnapshot) -> str:
    configured = os.environ.get(target.api_key_env, "") if target.api_key_env else ""
    return configured or PLACEHOLDER_KEY


async def _refuse_non_200(response: aiohttp.ClientResponse, rate_limit: dict[str, str]) -> None:
    if response.status == 200:
        return
    body = await response.read()
    raise ProbeFailure(
        classify_status(response.status), error_excerpt(body), http_status=response.status, rate_limit=rate_limit
    )


def _parse_json(data: str | bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise WireError(f"invalid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise WireError("JSON value is not an object")
    return value


def _tps(output_tokens: int, chunks: int, first: float | None, last: float | None) -> float | None:
    """Tokens per second after the first chunk, assuming equal-sized chunks (one token each on every provider we know)."""
    if first is None or last is None or chunks < 2 or last <= first or output_tokens <= 0:
        return None
    after_first = output_tokens * (chunks - 1) / chunks
    return after_first / (last - first)


async def _read_stream(target: OfferingSnapshot, response: aiohttp.ClientResponse, timed: dict[str, Any]) -> None:
    dialect = dialect_for(target.dialect)
    usage: dict[str, Any] = {}
    reply = Reply()
    done = False
    async for event, data in sse_events(response.content):
        if data.strip() == "[DONE]":
            done = True
            break
        delta = dialect.stream_delta(event, _parse_json(data))
        if delta.text:
            now = time.perf_counter()
            timed.setdefault("first", now)
            timed["last"] = now
            timed["chunks"] = timed.get("chunks", 0) + 1
            reply.text += delta.text
        if delta.usage:
            usage.update({k: v for k, v in delta.usage.items() if v is not None})
        reply.finish_reason = delta.finish_reason or reply.finish_reason
        if delta.done:
            done = True
            break
    if not done:
        raise ProbeFailure(ErrorClass.TRUNCATED, "stream ended without its final event", http_status=200)
    timed["reply"], timed["usage_raw"] = reply, usage


async def exchange(
    session: aiohttp.ClientSession, target: OfferingSnapshot, request: ChatRequest, *, stop_after_first: bool = False
) -> Timed:
    """Send one request; measure TTFT and throughput when it streams."""
    dialect = dialect_for(target.dialect)
    url, headers, body = dialect.build(target, request, api_key(target))
    started = time.perf_counter()
    state: dict[str, Any] = {}
    rate_limit: dict[str, str] = {}
    try:
        async with session.post(url, data=orjson.dumps(body), headers=headers, allow_redirects=False) as response:
            rate_limit = rate_limit_headers(response.headers)
            await _refuse_non_200(response, rate_limit)
            state["headers"] = True
            if request.stream and stop_after_first:
                return await _first_chunk_only(target, response, started, rate_limit)
            if request.stream:
                await _read_stream(target, response, state)
            else:
                data = _parse_json(await response.read())
                state["reply"], state["usage_raw"] = dialect.parse_reply(data), data.get("usage")
            status = response.status
    except ProbeFailure:
        raise
    except WireError as exc:
        raise ProbeFailure(ErrorClass.BAD_RESPONSE, str(exc), http_status=200, rate_limit=rate_limit) from exc
    except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
        error_class = classify_exception(exc, streaming_started="headers" in state)
        raise ProbeFailure(error_class, f"{type(exc).__name__}: {exc}", rate_limit=rate_limit) from exc
    total_ms = (time.perf_counter() - started) * 1000
    try:
        usage = dialect.usage(target, state["usage_raw"])
    except WireError as exc:
        raise ProbeFailure(ErrorClass.BAD_USAGE, str(exc), http_status=status, rate_limit=rate_limit) from exc
    first, last = state.get("first"), state.get("last")
    return Timed(
        reply=state["reply"],
        usage=usage,
        total_ms=total_ms,
        http_status=status,
        rate_limit=rate_limit,
        ttft_ms=(first - started) * 1000 if first is not None else None,
        tps=_tps(usage.output, state.get("chunks", 0), first, last),
        chunks=state.get("chunks", 0),
    )


async def _first_chunk_only(
    target: OfferingSnapshot, response: aiohttp.ClientResponse, started: float, rate_limit: dict[str, str]
) -> Timed:
    """Capability checks only need to know the request was accepted: read to the first text, then hang up."""
    dialect = dialect_for(target.dialect)
    async for event, data in sse_events(response.content):
        if data.strip() == "[DONE]":
            break
        delta = dialect.stream_delta(event, _parse_json(data))
        if delta.text or delta.done:
            break
    elapsed = (time.perf_counter() - started) * 1000
    return Timed(
        reply=Reply(),
        usage=Usage(0, 0, 0, 0),
        total_ms=elapsed,
        http_status=response.status,
        rate_limit=rate_limit,
        ttft_ms=elapsed,
    )
