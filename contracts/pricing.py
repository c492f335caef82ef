"""What the tenant pays for a request, from what the provider charges us.

Shared by the gateway (to hold and settle the tenant's balance) and metering (to
write the ledger), so both sides always agree to the micro-unit.
"""

from __future__ import annotations

from contracts.usage import TOKENS_PER_PRICE_UNIT, Prices

BPS = 10_000
# BYOK requests are billed by the provider to the tenant directly; we charge a fee.
BYOK_FEE_BPS = 500  # 5% of the would-be provider cost


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def charge_micros(*, cost_micros: int, markup_bps: int, byok: bool) -> int:
    """Tenant price in micro-units: cost plus markup (rounded up), or the BYOK fee only."""
    if cost_micros <= 0:
        return 0
    if byok:
        return _ceil_div(cost_micros * BYOK_FEE_BPS, BPS)
    return cost_micros + _ceil_div(cost_micros * markup_bps, BPS)


def worst_case_cost_micros(*, input_tokens: int, output_tokens: int, prices: Prices) -> int:
    """The most a request of this size can cost whatever the provider reports as cached, written to cache
    (5 minutes or 1 hour) or spent on reasoning: every input token at the dearest input-side price and
    every output token at the dearer of output and reasoning. Holds reserve this, so a settle never
    exceeds its hold."""
    input_price = max(prices.input, prices.cache_read, prices.cache_write_5m, prices.cache_write_1h)
    output_price = max(prices.output, prices.output if prices.reasoning is None else prices.reasoning)
    return _ceil_div(input_tokens * input_price + output_tokens * output_price, TOKENS_PER_PRICE_UNIT)
