"""Candidate offerings: those of the requested model that can serve this request at all.

Two rules beyond the caller's constraints (docs/routing.md, "Integrity before traffic" and "Overload"):
an offering whose integrity probes (price truth, token count, quality canary) have not run since it
was added or changed is not routable, unless every candidate of the model is in that state and the
caller allows fallbacks; and when every candidate is cooling down after failures (not for a provider's
stated rate limit), a caller that allows fallbacks gets the least-bad one tried instead of a 503.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts.keyrecord import KeyRecord
from contracts.snapshot import OfferingSnapshot
from contracts.usage import MICROS_PER_UNIT
from routing.failover.health import HealthBoard
from routing.router.prefs import ProviderPrefs
from routing.wire.embeddings import PARAMETER as EMBEDDINGS

ALWAYS_REQUIRED = frozenset({"tools", "vision", "dimensions"})  # the rest only with provider.require_parameters


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


def same_endpoint(offering: OfferingSnapshot, need: Need) -> bool:
    """An embedding offering serves only /v1/embeddings, and /v1/embeddings only embedding offerings."""
    return (EMBEDDINGS in offering.parameters) == (EMBEDDINGS in need.params)


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


Dropped = list[tuple[OfferingSnapshot, str]]  # (offering, the hard filter that removed it)


def _keep(pool: list[OfferingSnapshot], ok: list[bool], why: str, dropped: Dropped) -> list[OfferingSnapshot]:
    if all(ok):  # the common case: nothing dropped, no copies
        return pool
    dropped.extend((o, why) for o, keep in zip(pool, ok, strict=True) if not keep)
    return [o for o, keep in zip(pool, ok, strict=True) if keep]


def candidates(
    offerings: tuple[OfferingSnapshot, ...], record: KeyRecord, need: Need, prefs: ProviderPrefs, health: HealthBoard
) -> tuple[list[OfferingSnapshot], str | None]:
    """(candidates, why none) — the reason names the first filter that emptied the list."""
    pool, why, _ = filtered(offerings, record, need, prefs, health)
    return pool, why


def verified(offering: OfferingSnapshot) -> bool:
    """Its integrity probes have run since it was added or changed (the catalog says so)."""
    return not offering.integrity_pending


def least_bad(pool: list[OfferingSnapshot], health: HealthBoard) -> list[OfferingSnapshot]:
    """Every candidate is cooling down: the one whose cooldown ends first, unless they all cool down for
    a provider's stated rate limit (then its Retry-After is honoured: a 429 without sending)."""
    failing = [o for o in pool if health.rate_limited_for(o.offering_id) is None]
    if not failing:
        return []
    return [min(failing, key=lambda o: (health.get(o.offering_id).open_until, o.offering_id))]


def filtered(
    offerings: tuple[OfferingSnapshot, ...], record: KeyRecord, need: Need, prefs: ProviderPrefs, health: HealthBoard
) -> tuple[list[OfferingSnapshot], str | None, Dropped]:
    """``candidates`` plus the offerings each hard filter dropped (for the route explanation)."""
    dropped: Dropped = []
    pool = _keep(list(offerings), [same_endpoint(o, need) for o in offerings], "other_endpoint", dropped)
    if not pool:
        return [], "not_an_embedding_model" if EMBEDDINGS in need.params else "embedding_model", dropped
    pool = _keep(pool, [allowed(o, record, prefs) for o in pool], "not_allowed", dropped)
    if not pool:
        return [], "provider_not_allowed", dropped
    strict = [fits(o, need, prefs) for o in pool]
    fit = strict if any(strict) else [fits(o, need, prefs, clamp_output=True) for o in pool]
    pool = _keep(pool, fit, "does_not_fit", dropped)
    if not pool:
        return [], "no_offering_fits", dropped
    pool = _keep(pool, [within_price(o, prefs) for o in pool], "over_max_price", dropped)
    if not pool:
        return [], "over_max_price", dropped
    checked = [verified(o) for o in pool]
    if any(checked) or not prefs.allow_fallbacks:
        pool = _keep(pool, checked, "integrity_pending", dropped)
        if not pool:
            return [], "integrity_pending", dropped
    ready = _keep(pool, [health.available(o.offering_id) for o in pool], "cooling_down", dropped)
    if not ready and prefs.allow_fallbacks:
        ready = least_bad(pool, health)
        dropped[:] = [(o, why) for o, why in dropped if not (why == "cooling_down" and o in ready)]
    return ready, None if ready else "all_cooling_down", dropped
