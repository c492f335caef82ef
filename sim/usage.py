"""True and reported token usage of one request, and what the provider bills for it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from contracts.usage import Prices, Tokens, cost_micros


@dataclass(frozen=True, slots=True)
class SimUsage:
    input_total: int  # every prompt token, cached or not
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output: int  # includes reasoning
    reasoning: int

    @property
    def input_uncached(self) -> int:
        """Prompt tokens neither read from nor written to the cache (Anthropic's input_tokens)."""
        return self.input_total - self.cache_read - self.cache_write_5m - self.cache_write_1h

    def inflated(self, factor: float) -> SimUsage:
        """Over-reported usage: uncached input and output scaled up (cache counts stay true)."""
        if factor == 1.0:
            return self
        extra_input = math.ceil(self.input_uncached * factor) - self.input_uncached
        return SimUsage(
            input_total=self.input_total + extra_input,
            cache_read=self.cache_read,
            cache_write_5m=self.cache_write_5m,
            cache_write_1h=self.cache_write_1h,
            output=math.ceil(self.output * factor),
            reasoning=math.ceil(self.reasoning * factor),
        )

    def tokens(self) -> Tokens:
        return Tokens(
            input_uncached=self.input_uncached,
            cache_read=self.cache_read,
            cache_write_5m=self.cache_write_5m,
            cache_write_1h=self.cache_write_1h,
            output=self.output,
            reasoning=self.reasoning,
        )

    def cost(self, prices: Prices) -> int:
        return cost_micros(self.tokens(), prices)

    def as_dict(self) -> dict[str, int]:
        return {
            "input_total": self.input_total,
            "input_uncached": self.input_uncached,
            "cache_read": self.cache_read,
            "cache_write_5m": self.cache_write_5m,
            "cache_write_1h": self.cache_write_1h,
            "output": self.output,
            "reasoning": self.reasoning,
        }
