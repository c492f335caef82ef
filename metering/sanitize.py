"""Clamp absurd usage numbers from providers: flag them, never bill negative."""

from __future__ import annotations

from dataclasses import dataclass, replace

from contracts.holds import charge_within_hold
from contracts.pricing import charge_micros
from contracts.usage import Prices, Tokens, UsageEvent, cost_micros

# A single request beyond this many tokens of one kind is a provider bug, not usage.
MAX_TOKENS_PER_KIND = 50_000_000


# A provider-reported cost above this many times ours (+ $1) is a provider bug: stored and flagged, not booked.
REPORTED_COST_CEILING_FACTOR = 100
REPORTED_COST_CEILING_SLACK_MICROS = 1_000_000


@dataclass(frozen=True)
class Priced:
    tokens: Tokens
    cost_micros: int  # ours: the price snapshot x the tokens
    charge_micros: int
    flags: tuple[str, ...]
    reported_cost_micros: int | None = None  # the provider's own, when its usage said (never negative)
    # Tokens a provider flagged for over-counting reported beyond the true count (metering.provider_truth):
    # their cost (the provider still bills it: disputed) and what the tenant was not charged for them.
    overcount_cost_micros: int = 0
    overcount_charge_micros: int = 0

    @property
    def booked_cost_micros(self) -> int:
        """The provider cost the ledger books: the provider's own figure when it gave a sane one, else ours
        at the count it reported (an over-count is booked as billed, then disputed)."""
        if self.reported_cost_micros is None or "reported_cost_absurd" in self.flags:
            return self.cost_micros + self.overcount_cost_micros
        return self.reported_cost_micros


def reported_cost_flags(reported: int | None, computed: int) -> list[str]:
    ceiling = computed * REPORTED_COST_CEILING_FACTOR + REPORTED_COST_CEILING_SLACK_MICROS
    return ["reported_cost_absurd"] if reported is not None and reported > ceiling else []


def tokens_clamp(tokens: Tokens, *, cached_in_input: bool = False) -> tuple[Tokens, list[str]]:
    """Negative counts become 0, huge ones are capped, reasoning never exceeds output."""
    flags: list[str] = []
    values = {}
    for name in ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning"):
        raw = getattr(tokens, name)
        value = min(max(int(raw), 0), MAX_TOKENS_PER_KIND)
        if value != raw:
            flags.append(f"clamped_{name}")
        values[name] = value
    if values["reasoning"] > values["output"]:
        values["reasoning"] = values["output"]
        flags.append("clamped_reasoning")
    return Tokens(**values), flags


def event_price(event: UsageEvent, *, markup_bps: int) -> Priced:
    """Recompute cost from the price snapshot after clamping; keep the gateway's figures when they agree."""
    tokens, flags = tokens_clamp(event.tokens)
    flags = [*event.flags, *flags]
    reported = event.provider_cost_micros
    reported = reported if isinstance(reported, int) and not isinstance(reported, bool) and reported >= 0 else None
    if event.prices is None:
        cost = max(event.cost_micros, 0)
        charge = max(event.charge_micros, 0)
        flags += reported_cost_flags(reported, cost)
        return Priced(tokens, cost, charge, tuple(flags), reported)
    cost = cost_micros(tokens, event.prices)
    if cost == event.cost_micros and event.charge_micros >= 0:
        charge = event.charge_micros
    else:
        flags.append("cost_recomputed")
        charge = charge_micros(cost_micros=cost, markup_bps=markup_bps, byok=event.byok)
        if event.hold_id and charge > event.hold_micros:  # as the gateway settled it (routing.handoff.end_state)
            charge = charge_within_hold(charge, event.hold_micros)
            flags.append("charge_capped_at_hold")
    flags += reported_cost_flags(reported, cost)
    return Priced(tokens, cost, max(charge, 0), tuple(dict.fromkeys(flags)), reported)


def cache_full_price_micros(tokens: Tokens, prices: Prices | None) -> int:
    """What the cache-read tokens would have cost at the full input price (for cache savings)."""
    if prices is None or tokens.cache_read <= 0:
        return 0
    return cost_micros(replace(Tokens(), input_uncached=tokens.cache_read), prices)
