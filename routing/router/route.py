"""Routing decision: candidates, the strategy's order, the caller's ``provider`` overrides."""

from __future__ import annotations

from dataclasses import dataclass

from contracts.keyrecord import ROUTE_MODES, KeyRecord
from contracts.model_names import Resolution
from contracts.snapshot import OfferingSnapshot
from contracts.usage import Tokens, cost_micros
from routing.errors import GatewayError, forbidden, unknown_model
from routing.failover.health import HealthBoard
from routing.router.candidates import Need, candidates
from routing.router.prefs import ProviderPrefs
from routing.router.strategy import Signals, Strategy
from routing.state.catalog import CatalogState

EXPECTED_OUTPUT_TOKENS = 256  # when the caller sets no max_tokens, for price comparison only


@dataclass(frozen=True, slots=True)
class Route:
    offerings: list[OfferingSnapshot]  # attempt order
    mode: str
    reason: str


def route_mode(header: str | None, record: KeyRecord) -> str:
    mode = header or record.key_route_mode or record.tenant_routing.default_mode or "balanced"
    if mode not in ROUTE_MODES:
        raise GatewayError(400, "invalid_route_mode", f"x-tokenway-route must be one of {', '.join(ROUTE_MODES)}.")
    if record.allowed_route_modes is not None and mode not in record.allowed_route_modes:
        raise forbidden(f"This API key may not use the {mode!r} route mode.")
    return mode


def resolve_model(state: CatalogState, asked: str) -> Resolution:
    """The catalog model a request's ``model`` names (contracts.model_names); 404 with the closest names."""
    resolution = state.resolve(asked)
    if resolution is None:
        raise unknown_model(asked, state.names.suggest(asked))
    return resolution


def check_model_scope(model: str, record: KeyRecord) -> None:
    if record.allowed_models is not None and model not in record.allowed_models:
        raise forbidden(f"This API key may not use the model {model!r}.")


def _signals(offering: OfferingSnapshot, state: CatalogState, health: HealthBoard, need: Need) -> Signals:
    tokens = Tokens(input_uncached=need.input_estimate, output=need.max_tokens or EXPECTED_OUTPUT_TOKENS)
    return Signals(
        offering,
        state.stats_for(offering.offering_id),
        health.get(offering.offering_id),
        float(cost_micros(tokens, offering.prices)),
    )


def _apply_order(ranked: list[OfferingSnapshot], prefs: ProviderPrefs) -> list[OfferingSnapshot]:
    if not prefs.order:
        return ranked
    position = {slug: i for i, slug in enumerate(prefs.order)}
    listed = sorted((o for o in ranked if o.provider in position), key=lambda o: position[o.provider])
    rest = [o for o in ranked if o.provider not in position]
    return listed + rest if prefs.allow_fallbacks else listed


def plan(
    *, state: CatalogState, health: HealthBoard, strategy: Strategy, record: KeyRecord, model: str,
    need: Need, prefs: ProviderPrefs, mode: str, affinity: int | None,
) -> Route:  # fmt: skip
    offerings = state.by_model.get(model)
    if not offerings:
        raise unknown_model(model)
    pool, why = candidates(offerings, record, need, prefs, health)
    if not pool:
        cooling = why == "all_cooling_down"
        message = f"No provider can serve this request for {model!r} ({why})."
        raise GatewayError(
            503 if cooling else 400, why or "no_candidates", message, retry_after=1.0 if cooling else None
        )
    ranked = strategy.rank(
        [_signals(o, state, health, need) for o in pool], mode=mode, sort=prefs.sort, affinity=affinity
    )
    ordered = _apply_order([s.offering for s in ranked], prefs)
    if not ordered:
        raise GatewayError(
            400, "provider_not_allowed", "None of the providers in provider.order can serve this request."
        )
    if not prefs.allow_fallbacks:
        ordered = ordered[:1]
    return Route(ordered, mode, _reason(ordered[0], mode, prefs, affinity))


def _reason(first: OfferingSnapshot, mode: str, prefs: ProviderPrefs, affinity: int | None) -> str:
    if prefs.order and first.provider in prefs.order:
        return "order"
    if prefs.sort:
        return f"sort:{prefs.sort}"
    if affinity == first.offering_id:
        return f"{mode}:cache-affinity"
    return f"{mode}:score"
