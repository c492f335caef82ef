"""Performance: streaming requests at about 1k and 10k input tokens with a fixed output length.

Measures time to first token (any, reasoning included), time to first answer token, output
tokens/s while they were produced (probes/speed.py) and total time.
The 1k request is the headline TTFT; both feed throughput and availability.
"""

from __future__ import annotations

from evaluation.corpus import story_prompt
from evaluation.models import ErrorClass, ProbeKind
from evaluation.probes.base import ProbeContext, measure
from evaluation.probes.outcome import Outcome
from evaluation.wire.base import ChatRequest

# Input sizes: a chat turn and a RAG/agent-sized prompt, where prefill time starts to show.
INPUT_SIZES = {"1k": 1_000, "10k": 10_000}
# Long enough for a stable tokens/s (hundreds of inter-chunk gaps), short enough to stay cheap.
OUTPUT_TOKENS = 256
SYSTEM_PROMPT = "You are a helpful assistant."


async def run(ctx: ProbeContext) -> list[Outcome]:
    outcomes = []
    for variant, tokens in INPUT_SIZES.items():
        prompt = story_prompt(ctx.rng(variant), tokens)
        request = ChatRequest(
            system=(SYSTEM_PROMPT,), messages=({"role": "user", "content": prompt},), max_tokens=OUTPUT_TOKENS
        )
        outcome, timed = await measure(ctx, ProbeKind.PERFORMANCE, variant, request)
        if timed is not None and timed.ttft_ms is None:
            outcome.error_class = ErrorClass.BAD_RESPONSE  # a stream without any token is not an answer
            outcome.details["error"] = "stream carried no text"
        outcomes.append(outcome)
    return outcomes
