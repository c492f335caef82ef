"""Prompt cache: a multi-turn conversation on a long shared prefix, cache-hit ratio turn by turn.

Three variants, each on its own fresh prefix (so one cannot warm the other):
``plain``; ``billing`` with a Claude-Code billing block whose ``cch=`` changes every
request; ``stripped``, the billing variant after the gateway's stripping rule.
An offering whose ``billing`` ratio collapses while ``plain`` and ``stripped`` hit is
flagged ``billing_block_breaks_cache`` by the aggregation.
"""

from __future__ import annotations

import random

from evaluation.corpus import filler
from evaluation.models import ProbeKind
from evaluation.probes.base import ProbeContext, measure
from evaluation.probes.billing_block import billing_block, strip_billing_blocks
from evaluation.probes.outcome import Outcome
from evaluation.wire.base import ChatRequest

# Above every provider's minimum cacheable prefix (1,024 tokens for most) with room to spare.
PREFIX_TOKENS = 2_048
# Turn 1 writes the cache, turns 2..4 should read it: three readings per variant.
TURNS = 4
REPLY_TOKENS = 16  # the replies are not measured; keep them cheap
VARIANTS = ("plain", "billing", "stripped")


def _system(rng: random.Random, variant: str) -> tuple[str, ...]:
    prefix = f"Project handbook (edition {rng.randrange(10**9):09d}):\n{filler(rng, PREFIX_TOKENS)}"
    if variant == "plain":
        return (prefix,)
    blocks = (billing_block(rng), prefix)
    return strip_billing_blocks(blocks) if variant == "stripped" else blocks


async def _conversation(ctx: ProbeContext, variant: str) -> Outcome:
    rng = ctx.rng(f"cache-{variant}")
    system = _system(rng, variant)
    history: list[dict[str, str]] = []
    turns: list[dict[str, float | int]] = []
    for turn in range(1, TURNS + 1):
        if variant == "billing":
            system = (billing_block(rng), *system[1:])  # a new cch= on every request, as Claude Code does
        history.append(
            {"role": "user", "content": f"Question {turn}: summarise section {rng.randint(1, 40)} in one line."}
        )
        request = ChatRequest(
            system=system, messages=tuple(history), max_tokens=REPLY_TOKENS, stream=False, cache_prefix=True
        )
        outcome, timed = await measure(ctx, ProbeKind.CACHE, variant, request)
        if timed is None:
            outcome.details["turns"] = turns
            return outcome
        history.append({"role": "assistant", "content": timed.reply.text or "ok"})
        ratio = timed.usage.cached / timed.usage.input_total if timed.usage.input_total else 0.0
        turns.append(
            {"turn": turn, "input": timed.usage.input_total, "cached": timed.usage.cached, "ratio": round(ratio, 4)}
        )
    return _summary(outcome, turns)


def _summary(last: Outcome, turns: list[dict[str, float | int]]) -> Outcome:
    """Hit ratio over the reading turns (2..N): cached tokens / input tokens."""
    reading = turns[1:]
    input_total = int(sum(t["input"] for t in reading))
    cached = int(sum(t["cached"] for t in reading))
    last.input_tokens, last.cached_tokens, last.output_tokens = input_total, cached, None
    last.details.update(turns=turns, hit_ratio=round(cached / input_total, 4) if input_total else None)
    return last


async def run(ctx: ProbeContext) -> list[Outcome]:
    return [await _conversation(ctx, variant) for variant in VARIANTS]
