"""What a probe gets (ProbeContext) and the helper that turns one timed call into an Outcome."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import aiohttp

from contracts.snapshot import OfferingSnapshot
from contracts.tokens import count_text_tokens
from evaluation.probes.availability import ProbeFailure
from evaluation.probes.outcome import Outcome
from evaluation.probes.speed import NONE
from evaluation.probes.timed_call import Timed, timed_call
from evaluation.wire.base import ChatRequest


@dataclass(slots=True)
class ProbeContext:
    session: aiohttp.ClientSession
    offering: OfferingSnapshot
    region: str
    seed: int

    def rng(self, salt: str) -> random.Random:
        return random.Random(f"{self.seed}:{salt}")


def failed(outcome: Outcome, failure: ProbeFailure) -> None:
    """The failure's class, status, message and rate-limit headers on the outcome."""
    outcome.error_class = failure.error_class
    outcome.http_status = failure.http_status
    outcome.details.update(error=str(failure)[:300], rate_limit=failure.rate_limit)


async def measure(
    ctx: ProbeContext, kind: str, variant: str, request: ChatRequest, *, stop_after_first: bool = False
) -> tuple[Outcome, Timed | None]:
    """Run one timed call; a failure becomes an Outcome with its error class (and no Timed)."""
    outcome = Outcome(kind=kind, variant=variant, started_at=time.time(), details={"seed": ctx.seed})
    try:
        timed = await timed_call(ctx.session, ctx.offering, request, stop_after_first=stop_after_first)
    except ProbeFailure as failure:
        failed(outcome, failure)
        return outcome, None
    outcome.http_status = timed.http_status
    outcome.ttft_ms, outcome.tps, outcome.total_ms = timed.ttft_ms, timed.tps, timed.total_ms
    outcome.answer_ttft_ms = timed.answer_ttft_ms
    outcome.input_tokens, outcome.output_tokens = timed.usage.input_total, timed.usage.output
    outcome.cached_tokens = timed.usage.cached
    if timed.first_text:
        outcome.details["first_chunk_tokens"] = count_text_tokens(timed.first_text)
    if timed.usage.tokens.reasoning or timed.reasoning != NONE:
        outcome.details.update(reasoning=timed.reasoning, reasoning_tokens=timed.usage.tokens.reasoning)
    if timed.rate_limit:
        outcome.details["rate_limit"] = timed.rate_limit
    return outcome, timed
