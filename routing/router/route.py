"""Routing decision: candidates, the strategy's order, the caller's ``provider`` overrides."""

from __future__ import annotations

from dataclasses import dataclass, field

from contracts.keyrecord import ROUTE_MODES, KeyRecord
from contracts.model_names import Resolution
from contracts.route_explain import RouteCandidate
from contracts.snapshot import OfferingSnapshot
from routing.failover.health import HealthBoard
from routing.http.errors import GatewayError, forbidden, unknown_model, upstream_rate_limited
from routing.limits.board import CLEAR, Assessment, LimitBoard
from routing.router.candidates import Need, filtered
from routing.router.explain import Dropped, decisive, explain
from routing.router.prefs import ProviderPrefs
from routing.router.strategy import Scored, Signals, Strategy
from routing.state.offerings import CatalogState

EXPECTED_OUTPUT_TOKENS = 256  # when the caller sets no max_tokens (chat answers are short)
EXPECTED_OUTPUT_CAP = 1024  # a max_tokens is a ceiling, not an expectation: agents ask for 32k and use ~1k
COOLING_RETRY_AFTER_S = 1.0  # a breaker half-opens within its cooldown: one trial request soon


@dataclass(frozen=True, slots=True)
class Route:
    offerings: list[OfferingSnapshot]  # attempt order
    mode: str
    reason: str
    scored: list[Scored] = field(default_factory=list)  # attempt order first, then the rest
    dropped: Dropped = field(default_factory=list)

    def candidates(self) -> tuple[RouteCandidate, ...]:
        """The explanation (contracts.route_explain), built when the usage event is, off the request path."""
        return explain(self.scored, self.dropped) if self.scored else ()


def route_mode(header: str | None, record: KeyRecord) -> str:
    mode = header or record.key_route_mode or record.tenant_routing.default_mode or "balanced"
    if mode not in ROUTE_MODES:
        raise GatewayError(400, "invalid_route_mode", f"x-tokenway-route must be one of {', '.join(ROUTE_MODES)}.")
    if record.allowed_route_modes is not None and mode not in record.allowed_route_modes:
        raise forbidden(f"This API key may not use the {mode!r} route mode.")
    return mode


def resolve_model(state: CatalogState, asked: str, *, family_fallback: bool = False) -> Resolution:
    """The catalog model a request's ``model`` names (contracts.model_names); 404 with the closest
    names, the family's newest first. The family rule serves only keys that opted in."""
    resolution = state.resolve(asked, family_fallback=family_fallback)
    if resolution is None:
        raise unknown_model(asked, state.names.suggest(asked), family=state.names.family_match(asked))
    return resolution


def check_model_scope(model: str, record: KeyRecord) -> None:
    if record.allowed_models is not None and model not in record.allowed_models:
        raise forbidden(f"This API key may not use the model {model!r}.")


def _signals(
    offering: OfferingSnapshot, state: CatalogState, health: HealthBoard, need: Need, affinity: int | None,
    load: Assessment = CLEAR,
) -> Signals:  # fmt: skip
    """This request's expected cost and size on one offering, from its per-snapshot estimate."""
    estimate = state.estimate(offering)
    output = min(need.max_tokens or EXPECTED_OUTPUT_TOKENS, EXPECTED_OUTPUT_CAP)
    cost, uncached = estimate.request_cost(
        input_tokens=need.input_estimate, output_tokens=output, holds_prefix=affinity == offering.offering_id
    )
    live = health.live(offering.offering_id)
    return Signals(offering, None, live, cost, estimate, uncached, output, load.penalty)


def rate_tokens(need: Need) -> int:
    """What a provider's TPM window counts for this request: the prompt and the allowed output."""
    return need.input_estimate + (need.max_tokens or EXPECTED_OUTPUT_TOKENS)


def within_limits(
    pool: list[OfferingSnapshot], limits: LimitBoard | None, need: Need, dropped: Dropped
) -> tuple[list[OfferingSnapshot], list[Assessment]]:
    """Drop offerings whose learned limit would refuse this request (``near_limit``), unless that
    drops them all (then a 429 and failover is still the best chance); assess the rest's load."""
    if limits is None:
        return pool, [CLEAR] * len(pool)
    tokens = rate_tokens(need)
    assessed = limits.assess_all(pool, tokens)
    if all(a.exhausted for a in assessed) or not any(a.exhausted for a in assessed):
        return pool, assessed
    dropped.extend((o, "near_limit") for o, a in zip(pool, assessed, strict=True) if a.exhausted)
    kept = [(o, a) for o, a in zip(pool, assessed, strict=True) if not a.exhausted]
    return [o for o, _ in kept], [a for _, a in kept]


def _apply_order(ranked: list[OfferingSnapshot], prefs: ProviderPrefs) -> list[OfferingSnapshot]:
    if not prefs.order:
        return ranked
    position = {slug: i for i, slug in enumerate(prefs.order)}
    listed = sorted((o for o in ranked if o.provider in position), key=lambda o: position[o.provider])
    rest = [o for o in ranked if o.provider not in position]
    return listed + rest if prefs.allow_fallbacks else listed


def plan(
    *, state: CatalogState, health: HealthBoard, strategy: Strategy, record: KeyRecord, model: str,
    need: Need, prefs: ProviderPrefs, mode: str, affinity: int | None, limits: LimitBoard | None = None,
) -> Route:  # fmt: skip
    offerings = state.by_model.get(model)
    if not offerings:
        raise unknown_model(model)
    return plan_among(
        offerings, state=state, health=health, strategy=strategy, record=record, model=model, need=need,
        prefs=prefs, mode=mode, affinity=affinity, limits=limits,
    )  # fmt: skip


def plan_among(
    offerings: tuple[OfferingSnapshot, ...], *, state: CatalogState, health: HealthBoard, strategy: Strategy,
    record: KeyRecord, model: str, need: Need, prefs: ProviderPrefs, mode: str, affinity: int | None,
    limits: LimitBoard | None = None,
) -> Route:  # fmt: skip
    """``plan`` over given offerings (one model's, or several for a virtual model)."""
    pool, why, dropped = filtered(offerings, record, need, prefs, health)
    if not pool:
        raise _none_ready(why, model, dropped, health)
    pool, loads = within_limits(pool, limits, need, dropped)
    signals = [_signals(o, state, health, need, affinity, load) for o, load in zip(pool, loads, strict=True)]
    scored = strategy.scored(signals, mode=mode, sort=prefs.sort, affinity=affinity)
    ordered = _apply_order([x.signals.offering for x in scored], prefs)
    if not ordered:
        raise GatewayError(
            400, "provider_not_allowed", "None of the providers in provider.order can serve this request."
        )
    if not prefs.allow_fallbacks:
        ordered = ordered[:1]
    final = scored if len(ordered) == len(scored) and not prefs.order else _in_order(scored, ordered)
    return Route(ordered, mode, _reason(ordered[0], mode, prefs, decisive(final)), final, dropped)


def _none_ready(why: str | None, model: str, dropped: Dropped, health: HealthBoard) -> GatewayError:
    """Why no offering is left: the caller's constraints (400), every one cooling down for a provider
    rate limit (429 until the soonest has room), or cooling down after failures (503)."""
    message = f"No provider can serve this request for {model!r} ({why})."
    if why != "all_cooling_down":
        return GatewayError(400, why or "no_candidates", message)
    waits = [health.rate_limited_for(o.offering_id) for o, reason in dropped if reason == "cooling_down"]
    if waits and all(wait is not None for wait in waits):
        return upstream_rate_limited(min(wait for wait in waits if wait is not None))
    return GatewayError(503, why, message, retry_after=COOLING_RETRY_AFTER_S)


def _in_order(scored: list[Scored], ordered: list[OfferingSnapshot]) -> list[Scored]:
    """The scored candidates in attempt order (the caller's provider.order may reorder), then the rest."""
    rank = {o.offering_id: i for i, o in enumerate(ordered)}
    return sorted(scored, key=lambda x: rank.get(x.signals.offering.offering_id, len(rank)))


def _reason(first: OfferingSnapshot, mode: str, prefs: ProviderPrefs, factor: str) -> str:
    """Short, for the ``x-tokenway-route`` header: ``<mode>:<winner>:<deciding part>``."""
    if prefs.order and first.provider in prefs.order:
        return "order"
    if prefs.sort:
        return f"sort:{prefs.sort}:{first.provider}"
    return f"{mode}:{first.provider}:{factor}"
