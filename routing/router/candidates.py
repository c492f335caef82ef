"""Candidate offerings: those of the requested model that can serve this request at all."""

from __future__ import annotations

from dataclasses import dataclass

from contracts.keyrecord import KeyRecord
from contracts.snapshot import OfferingSnapshot
from contracts.usage import MICROS_PER_UNIT
from routing.failover.health import HealthBoard
from routing.router.prefs import ProviderPrefs

ALWAYS_REQUIRED = frozenset({"tools", "vision"})  # the rest only with provider.require_parameters


@dataclass(frozen=True, slots=True)
class Need:
    input_estimate: int
    max_tokens: int | None
    params: frozenset[str]


def fits(offering: OfferingSnapshot, need: Need, prefs: ProviderPrefs, *, clamp_output: bool = False) -> bool:
    """Context, output limit and parameters. With ``clamp_output`` a smaller output limit is
    accepted (the forwarded max_tokens is lowered to it, as agents ask for 32k+ by default)."""
    max_tokens = need.max_tokens
    if max_tokens is not None and max_tokens > offering.max_output:
        if not clamp_output:
            return False
        max_tokens = offering.max_output
    if need.input_estimate + (max_tokens or 0) > offering.context_window:
        return False
    required = need.params if prefs.require_parameters else need.params & ALWAYS_REQUIRED
    return required.issubset(offering.parameters)


def allowed(offering: OfferingSnapshot, record: KeyRecord, prefs: ProviderPrefs) -> bool:
    routing = record.tenant_routing
    provider = offering.provider
    if routing.allowed_providers and provider not in routing.allowed_providers:
        return False
    if provider in routing.blocked_providers or provider in prefs.ignore:
        return False
    return not (prefs.only and provider not in prefs.only)


def within_price(offering: OfferingSnapshot, prefs: ProviderPrefs) -> bool:
    prices = offering.prices
    if prefs.max_price_input is not None and prices.input > prefs.max_price_input * MICROS_PER_UNIT:
        return False
    return prefs.max_price_output is None or prices.output <= prefs.max_price_output * MICROS_PER_UNIT


def candidates(
    offerings: tuple[OfferingSnapshot, ...], record: KeyRecord, need: Need, prefs: ProviderPrefs, health: HealthBoard
) -> tuple[list[OfferingSnapshot], str | None]:
    """(candidates, why none) — the reason names the first filter that emptied the list."""
    pool = [o for o in offerings if allowed(o, record, prefs)]
    if not pool:
        return [], "provider_not_allowed"
    fitting = [o for o in pool if fits(o, need, prefs)] or [o for o in pool if fits(o, need, prefs, clamp_output=True)]
    if not fitting:
        return [], "no_offering_fits"
    pool = fitting
    pool = [o for o in pool if within_price(o, prefs)]
    if not pool:
        return [], "over_max_price"
    ready = [o for o in pool if health.available(o.offering_id)]
    return ready, None if ready else "all_cooling_down"
