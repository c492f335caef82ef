"""Price truth: the tokens and cost a provider reports versus our own count and the published price.

We count input and output with contracts.tokens (the counter the simulated fleet
and the gateway's estimator share). Reported input above our count by more than
the tolerance is an overcount; a reported cost off the published price list is a
price mismatch. Verdicts go to ``details``; the aggregation turns them into flags.
"""

from __future__ import annotations

from contracts.tokens import MESSAGE_OVERHEAD_TOKENS, count_text_tokens
from contracts.usage import cost_micros
from evaluation.corpus import story_prompt
from evaluation.models import ProbeKind
from evaluation.probes.base import ProbeContext, measure
from evaluation.probes.outcome import Outcome
from evaluation.wire.base import ChatRequest, Usage

INPUT_TOKENS = 800
OUTPUT_TOKENS = 64
# Tokenizers differ from our approximation; beyond 10% (+8 for framing) the provider is over-reporting.
TOKEN_TOLERANCE_SHARE = 0.10
TOKEN_TOLERANCE_ABS = 8
# A reported cost may round differently; beyond 1% (+1 micro) it is not the published price.
COST_TOLERANCE_SHARE = 0.01
SYSTEM_PROMPT = "You are a concise assistant."


def counted_input(system: tuple[str, ...], messages: tuple[dict[str, str], ...]) -> int:
    parts = [*system, *(m["content"] for m in messages)]
    framing = MESSAGE_OVERHEAD_TOKENS * (len(messages) + (1 if system else 0))
    return sum(count_text_tokens(p) for p in parts) + framing


def verdict(*, ours_in: int, ours_out: int, usage: Usage, expected_cost: int) -> dict[str, object]:
    over_in = usage.input_total > ours_in * (1 + TOKEN_TOLERANCE_SHARE) + TOKEN_TOLERANCE_ABS
    mismatch = (
        usage.cost_micros is not None
        and abs(usage.cost_micros - expected_cost) > expected_cost * COST_TOLERANCE_SHARE + 1
    )
    return {
        "counted_input": ours_in,
        "reported_input": usage.input_total,
        "counted_output": ours_out,
        "reported_output": usage.output,
        "input_ratio": round(usage.input_total / ours_in, 4) if ours_in else None,
        "reported_cost": usage.cost_micros,
        "expected_cost": expected_cost,
        # output is reported but not judged: reasoning tokens are billed as output yet not all visible to us
        "token_overcount": over_in,
        "price_mismatch": mismatch,
    }


async def run(ctx: ProbeContext) -> list[Outcome]:
    system = (SYSTEM_PROMPT,)
    messages = ({"role": "user", "content": story_prompt(ctx.rng("price"), INPUT_TOKENS)},)
    request = ChatRequest(system=system, messages=messages, max_tokens=OUTPUT_TOKENS, stream=False)
    outcome, timed = await measure(ctx, ProbeKind.PRICE, "reported_vs_counted", request)
    if timed is None:
        return [outcome]
    # Billed exactly as the gateway bills: the tokens come from the same reader (contracts.provider_usage).
    expected = cost_micros(timed.usage.tokens, ctx.offering.prices)
    outcome.details.update(
        verdict(
            ours_in=counted_input(system, messages),
            ours_out=count_text_tokens(timed.reply.text),
            usage=timed.usage,
            expected_cost=expected,
        )
    )
    return [outcome]
