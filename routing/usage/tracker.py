"""Per-request usage accumulator: provider usage when it arrives, delivered text for the estimate."""

from __future__ import annotations

from dataclasses import dataclass, field

from contracts.snapshot import OfferingSnapshot
from contracts.tokens import count_text_tokens
from contracts.usage import Tokens
from routing.usage.normalize import Usage, read_counts, to_tokens

# Totals beyond this many times the context window are treated as a provider bug.
ABSURD_FACTOR = 4


@dataclass(slots=True)
class UsageTracker:
    input_estimate: int
    provider_usage: Usage = field(default_factory=dict)
    seen_usage: bool = False
    delivered_chars: list[str] = field(default_factory=list)

    def merge(self, usage: Usage | None) -> None:
        """Later values win: Anthropic's message_delta counts are cumulative, not increments."""
        if isinstance(usage, dict):
            self.seen_usage = True
            self.provider_usage.update({k: v for k, v in usage.items() if v is not None})

    def delivered(self, text: str) -> None:
        if text:
            self.delivered_chars.append(text)

    def output_estimate(self) -> int:
        return count_text_tokens("".join(self.delivered_chars))

    def tokens(self, offering: OfferingSnapshot, *, complete: bool) -> tuple[Tokens, str, tuple[str, ...]]:
        """(tokens, usage_source, flags); estimated when the provider's usage never came."""
        has_output = "output_tokens" in self.provider_usage or "completion_tokens" in self.provider_usage
        if self.seen_usage and (complete or has_output):
            counts = read_counts(offering.usage_dialect, self.provider_usage)
            ceiling = ABSURD_FACTOR * (offering.context_window + offering.max_output)
            tokens, flags = to_tokens(counts, cached_in_input=offering.cached_tokens_in_input, ceiling=ceiling)
            if not complete:
                tokens = _with_output_floor(tokens, self.output_estimate())
            return tokens, "provider", flags
        estimate = Tokens(input_uncached=self.input_estimate, output=self.output_estimate())
        return estimate, "estimated", ("usage_missing",)


def _with_output_floor(tokens: Tokens, delivered: int) -> Tokens:
    if tokens.output >= delivered:
        return tokens
    return Tokens(
        tokens.input_uncached,
        tokens.cache_read,
        tokens.cache_write_5m,
        tokens.cache_write_1h,
        delivered,
        tokens.reasoning,
    )
