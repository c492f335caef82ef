"""Embedding offerings: one batch of passages per probe, read whole (nothing streams, so there is no
time to first token and no output speed).

- performance kind, variant ``embed``: the time to the whole answer, availability and error classes;
- price kind, variant ``embed``: the provider's input tokens against our count of the passages, its
  billed cost against the published price (the chat price probe's verdict, probes/price.py).

Both record the vectors' measured length in ``details["dimensions"]`` (the leaderboard shows it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import aiohttp
import orjson

from contracts.snapshot import OfferingSnapshot
from contracts.tokens import count_text_tokens
from contracts.usage import cost_micros
from evaluation.corpus import filler
from evaluation.models import ErrorClass, ProbeKind
from evaluation.probes import price
from evaluation.probes.availability import ProbeFailure, classify_exception, rate_limit_headers
from evaluation.probes.base import ProbeContext, failed
from evaluation.probes.outcome import EMBEDDING_VARIANT, Outcome
from evaluation.probes.timed_call import api_key, billed_cost, parse_json, refuse_non_200
from evaluation.wire import embeddings
from evaluation.wire.base import Usage, WireError

# A small batch of RAG-sized passages, as an indexer sends them: about 1k input tokens a probe.
INPUTS = 8
INPUT_TOKENS = 128


@dataclass(slots=True)
class EmbeddingTimed:
    usage: Usage
    vectors: embeddings.Vectors
    total_ms: float
    http_status: int
    rate_limit: dict[str, str] = field(default_factory=dict)


def passages(ctx: ProbeContext, salt: str) -> list[str]:
    rng = ctx.rng(salt)
    return [filler(rng, INPUT_TOKENS) for _ in range(INPUTS)]


async def timed_embedding(
    session: aiohttp.ClientSession, offering: OfferingSnapshot, inputs: list[str]
) -> EmbeddingTimed:
    """One embeddings request, timed to the last byte of its answer; failures raise ProbeFailure."""
    url, headers, body = embeddings.build(offering, inputs, api_key(offering))
    started = time.perf_counter()
    rate_limit: dict[str, str] = {}
    answered = False
    try:
        async with session.post(url, data=orjson.dumps(body), headers=headers, allow_redirects=False) as response:
            rate_limit = rate_limit_headers(response.headers)
            billed = billed_cost(response.headers)
            await refuse_non_200(response, rate_limit)
            answered = True
            data = parse_json(await response.read())
            status = response.status
        total_ms = (time.perf_counter() - started) * 1000
        vectors = embeddings.vectors(data, len(inputs))
    except ProbeFailure:
        raise
    except WireError as exc:
        raise ProbeFailure(ErrorClass.BAD_RESPONSE, str(exc), http_status=200, rate_limit=rate_limit) from exc
    except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
        error_class = classify_exception(exc, streaming_started=answered)
        raise ProbeFailure(error_class, f"{type(exc).__name__}: {exc}", rate_limit=rate_limit) from exc
    try:
        usage = embeddings.usage(offering, data.get("usage"))
    except WireError as exc:
        raise ProbeFailure(ErrorClass.BAD_USAGE, str(exc), http_status=status, rate_limit=rate_limit) from exc
    if usage.cost_micros is None and billed is not None:
        usage = replace(usage, cost_micros=billed)
    return EmbeddingTimed(usage=usage, vectors=vectors, total_ms=total_ms, http_status=status, rate_limit=rate_limit)


async def _measure(ctx: ProbeContext, kind: str) -> tuple[Outcome, EmbeddingTimed | None, list[str]]:
    inputs = passages(ctx, kind)
    outcome = Outcome(kind=kind, variant=EMBEDDING_VARIANT, started_at=time.time(), details={"seed": ctx.seed})
    try:
        timed = await timed_embedding(ctx.session, ctx.offering, inputs)
    except ProbeFailure as failure:
        failed(outcome, failure)
        return outcome, None, inputs
    outcome.http_status, outcome.total_ms = timed.http_status, timed.total_ms
    outcome.input_tokens, outcome.output_tokens = timed.usage.input_total, timed.usage.output
    outcome.cached_tokens = timed.usage.cached
    outcome.details.update(inputs=timed.vectors.count, dimensions=timed.vectors.dimensions)
    if timed.rate_limit:
        outcome.details["rate_limit"] = timed.rate_limit
    return outcome, timed, inputs


async def run_performance(ctx: ProbeContext) -> list[Outcome]:
    outcome, _timed, _inputs = await _measure(ctx, ProbeKind.PERFORMANCE)
    return [outcome]


async def run_price(ctx: ProbeContext) -> list[Outcome]:
    outcome, timed, inputs = await _measure(ctx, ProbeKind.PRICE)
    if timed is None:
        return [outcome]
    # Billed exactly as the gateway bills an embedding: input tokens at the offering's input price.
    expected = cost_micros(timed.usage.tokens, ctx.offering.prices)
    ours = sum(count_text_tokens(text) for text in inputs)
    outcome.details.update(price.verdict(ours_in=ours, ours_out=0, usage=timed.usage, expected_cost=expected))
    return [outcome]
