"""Virtual models ``auto``, ``auto:cost``, ``auto:performance``, ``auto:quality``: the router picks
the model as well as the provider, among the models the key may use.

All offerings of the allowed models are scored together (the quality term carries the model's
quality prior and its canaries, the cost term its prices), so ``auto:cost`` lands on the cheapest
model that is honest and healthy and ``auto:quality`` on the best one. Fallbacks stay within the
winning model: the answer, the bill and the usage event name one model.
"""

from __future__ import annotations

from dataclasses import replace

from contracts.keyrecord import ROUTE_MODES, KeyRecord
from routing.failover.health import HealthBoard
from routing.http.errors import forbidden
from routing.limits.board import LimitBoard
from routing.router.candidates import Need
from routing.router.prefs import ProviderPrefs
from routing.router.route import Route, plan_among
from routing.router.strategy import Strategy
from routing.state.offerings import CatalogState

AUTO = "auto"
VIRTUAL_MODELS = (AUTO, *(f"{AUTO}:{mode}" for mode in ROUTE_MODES))


def virtual_mode(asked: str) -> str | None:
    """None for a real model; "" for ``auto`` (the header's or key's mode); the mode of ``auto:<mode>``."""
    if asked == AUTO:
        return ""
    if asked.startswith(AUTO + ":") and asked in VIRTUAL_MODELS:
        return asked[len(AUTO) + 1 :]
    return None


def plan_auto(
    *, state: CatalogState, health: HealthBoard, strategy: Strategy, record: KeyRecord, need: Need,
    prefs: ProviderPrefs, mode: str, affinity: int | None, limits: LimitBoard | None = None,
) -> Route:  # fmt: skip
    allowed = record.allowed_models
    models = [m for m in state.models() if allowed is None or m in allowed]
    if not models:
        raise forbidden("This API key may not use any model, so auto cannot choose one.")
    offerings = tuple(o for m in models for o in state.by_model[m])
    route = plan_among(
        offerings, state=state, health=health, strategy=strategy, record=record, model=AUTO, need=need,
        prefs=prefs, mode=mode, affinity=affinity, limits=limits,
    )  # fmt: skip
    model = route.offerings[0].model
    same = [o for o in route.offerings if o.model == model]
    return replace(route, offerings=same, reason=f"auto:{model};{route.reason}")
