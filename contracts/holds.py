"""How big a call's hold is and what it may be charged: shared by the gateway (admission, stream
cut-off, settlement) and metering (which recomputes charges), so both bound a call the same way.

A call can be charged for at most its *output allowance*: the answer the caller allowed (``max_tokens``
/ ``max_completion_tokens`` / ``max_output_tokens``, else the offering's ``max_output``) plus the
reasoning the model spends outside that cap (the catalog's ``max_reasoning_tokens``: DeepSeek's reasoner
thinks up to 32K tokens whatever ``max_tokens`` says; 0 where the cap bounds reasoning too, as OpenAI's
``max_completion_tokens`` and Anthropic's thinking budget do). The hold prices that allowance at the
dearest output-side price, so output beyond it (a provider over-reporting, a model thinking past its
documented cap) is clamped and never charged, and a charge never passes its hold (docs/billing.md).
"""

from __future__ import annotations

from dataclasses import replace

from contracts.pricing import charge_micros, worst_case_cost_micros
from contracts.usage import Prices, Tokens


def output_allowance(*, max_tokens: int | None, max_output: int, max_reasoning_tokens: int = 0) -> int:
    """The most output tokens (reasoning included) a call may be charged for."""
    answer = min(max_tokens or max_output, max_output)
    return answer + max(max_reasoning_tokens, 0)


def output_clamp(tokens: Tokens, allowance: int) -> tuple[Tokens, int]:
    """Tokens with output cut to ``allowance`` (reasoning within it), and how many output tokens were cut."""
    excess = tokens.output - allowance
    if excess <= 0:
        return tokens, 0
    return replace(tokens, output=allowance, reasoning=min(tokens.reasoning, allowance)), excess


def hold_micros(*, input_tokens: int, output_allowance: int, prices: Prices, markup_bps: int, byok: bool) -> int:
    """The tenant charge of the worst case: every input token at the dearest input-side price (cache
    writes included), every allowed output token at the dearer of output and reasoning."""
    cost = worst_case_cost_micros(input_tokens=input_tokens, output_tokens=output_allowance, prices=prices)
    return charge_micros(cost_micros=cost, markup_bps=markup_bps, byok=byok)


def charge_within_hold(charge: int, hold: int) -> int:
    """The charge a call settles: never above its hold. The hold covers the allowance at the worst
    price, so only input beyond the estimate's margin (a provider over-counting the prompt) reaches this."""
    return min(charge, max(hold, 0))
