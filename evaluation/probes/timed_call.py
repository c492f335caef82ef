"""One request to an offering, measured: a streaming call or a plain one.

Failures raise ProbeFailure with the right error class; nothing else escapes
(broken JSON, truncated streams and odd usage are classified, never crash the batch).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import aiohttp
import orjson

from contracts.env import env_str
from contracts.snapshot import OfferingSnapshot
from evaluation.models import ErrorClass
from evaluation.probes.availability import (
    ProbeFailure,
    classify_exception,
    classify_status,
    error_excerpt,
    rate_limit_headers,
)
from evaluation.probes.speed import NONE, Arrivals, stream_speed
from evaluation.wire import dialect_for
from evaluation.wire.base import ChatRequest, Reply, Usage, WireError
from evaluation.wire.sse import sse_events

PLACEHOLDER_KEY = "sk-tokenway-probe"
# Where a provider tells what it bills for this request, when not in the usage object. Real providers
# expose this through billing APIs (adapters not written yet); the simulated fleet sends a header.
BILLED_COST_HEADERS = ("x-sim-billed-cost-micros",)  # used when the provider's key env var is unset (demo, simulator)


@dataclass(slots=True)
class Timed:
    reply: Reply
    usage: Usage
    total_ms: float
    http_status: int
    rate_limit: dict[str, str] = field(default_factory=dict)
    ttft_ms: float | None = None  # first token of any kind, reasoning included (probes/speed.py)
    tps: float | None = None  # output tokens/s while they were produced, reasoning included
    chunks: int = 0
    first_text: str = ""
    answer_ttft_ms: float | None = None  # first answer token
    reasoning: str = NONE  # how the reasoning reached us: none | streamed | hidden


def api_key(offering: OfferingSnapshot) -> str:
    configured = env_str(offering.api_key_env) if offering.api_key_env else ""
    return configured or PLACEHOLDER_KEY


async def refuse_non_200(response: aiohttp.ClientResponse, rate_limit: dict[str, str]) -> None:
    if response.status == 200:
        return
    body = await response.read()
    raise ProbeFailure(
        classify_status(response.status), error_excerpt(body), http_status=response.status, rate_limit=rate_limit
    )


def billed_cost(headers: Any) -> int | None:
    for name in BILLED_COST_HEADERS:
        raw = headers.get(name)
        if raw is not None and str(raw).isdigit():
            return int(raw)
    return None


def parse_json(data: str | bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise WireError(f"invalid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise WireError("JSON value is not an object")
    return value


async def _read_stream(offering: OfferingSnapshot, response: aiohttp.ClientResponse, timed: dict[str, Any]) -> None:
    dialect = dialect_for(offering.dialect)
    usage: dict[str, Any] = {}
    reply = Reply()
    arrivals = timed["arrivals"] = Arrivals()
    done = False
    async for event, data in sse_events(response.content):
        if data.strip() == "[DONE]":
            done = True
            break
        delta = dialect.stream_delta(event, parse_json(data))
        if delta.text or delta.reasoning:
            arrivals.add(time.perf_counter(), reasoning=delta.reasoning, text=delta.text)
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


async def timed_call(
    session: aiohttp.ClientSession, offering: OfferingSnapshot, request: ChatRequest, *, stop_after_first: bool = False
) -> Timed:
    """Send one request; measure TTFT and throughput when it streams."""
    dialect = dialect_for(offering.dialect)
    url, headers, body = dialect.build(offering, request, api_key(offering))
    started = time.perf_counter()
    state: dict[str, Any] = {}
    rate_limit: dict[str, str] = {}
    try:
        async with session.post(url, data=orjson.dumps(body), headers=headers, allow_redirects=False) as response:
            rate_limit = rate_limit_headers(response.headers)
            state["billed"] = billed_cost(response.headers)
            await refuse_non_200(response, rate_limit)
            state["headers"] = True
            if request.stream and stop_after_first and response.content_type.startswith("text/event-stream"):
                return await _first_chunk_only(offering, response, started, rate_limit)
            if request.stream:
                if not response.content_type.startswith("text/event-stream"):
                    raise WireError(f"expected an event stream, got {response.content_type!r}")
                await _read_stream(offering, response, state)
            else:
                data = parse_json(await response.read())
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
        usage = dialect.usage(offering, state["usage_raw"])
        if usage.cost_micros is None and state.get("billed") is not None:
            usage = replace(usage, cost_micros=state["billed"])
    except WireError as exc:
        raise ProbeFailure(ErrorClass.BAD_USAGE, str(exc), http_status=status, rate_limit=rate_limit) from exc
    arrivals = state.get("arrivals") or Arrivals()
    speed = stream_speed(arrivals, started=started, output_tokens=usage.output, reasoning_tokens=usage.tokens.reasoning)
    return Timed(
        reply=state["reply"],
        usage=usage,
        total_ms=total_ms,
        http_status=status,
        rate_limit=rate_limit,
        ttft_ms=speed.ttft_ms,
        tps=speed.tps,
        first_text=arrivals.first_text,
        chunks=arrivals.chunks,
        answer_ttft_ms=speed.answer_ttft_ms,
        reasoning=speed.reasoning,
    )


async def _first_chunk_only(
    offering: OfferingSnapshot, response: aiohttp.ClientResponse, started: float, rate_limit: dict[str, str]
) -> Timed:
    """Capability checks only need to know the request was accepted: read to the first token, then hang up."""
    dialect = dialect_for(offering.dialect)
    async for event, data in sse_events(response.content):
        if data.strip() == "[DONE]":
            break
        delta = dialect.stream_delta(event, parse_json(data))
        if delta.text or delta.reasoning or delta.done:
            break
    elapsed = (time.perf_counter() - started) * 1000
    return Timed(
        reply=Reply(),
        usage=Usage(),
        total_ms=elapsed,
        http_status=response.status,
        rate_limit=rate_limit,
        ttft_ms=elapsed,
    )
