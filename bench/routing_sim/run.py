"""One comparison: every router on the same workload and a fresh copy of the same fleet."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable

from bench.routing_sim.probes import Evaluation
from bench.routing_sim.replay import Tally, replay
from bench.routing_sim.strategies import BASELINES, MODES, Router, Tokenway
from bench.routing_sim.variants import Variant
from bench.routing_sim.workload import Request
from bench.routing_sim.world import World, scaled
from contracts.snapshot import CatalogSnapshot
from sim.fleet_spec import load_catalog
from tests.catalogs import sim_catalog

ROUTERS = (*BASELINES, *(f"tokenway:{m}" for m in MODES))


def bench_catalog(limit_scale: float = 1.0) -> CatalogSnapshot:
    """The demo catalog as the platform publishes it (declared RPM/TPM included, times ``limit_scale``)."""
    catalog = sim_catalog("http://fleet")
    limits = {
        (s.provider, s.model): (scaled(s.rpm, limit_scale), scaled(s.tpm, limit_scale))
        for p in load_catalog().values()
        for s in p.offerings
    }
    offerings = tuple(
        dataclasses.replace(o, rpm=limits[(o.provider, o.model)][0], tpm=limits[(o.provider, o.model)][1])
        for o in catalog.offerings
    )
    return dataclasses.replace(catalog, offerings=offerings)


def make_router(name: str, world: World, catalog) -> Router:
    now = world.clock.now
    if name.startswith("tokenway:"):
        return Tokenway(name, now, mode=name.split(":", 1)[1]).setup(catalog)
    return BASELINES[name](now)


def compare(
    requests: list[Request],
    names: Iterable[str] = ROUTERS,
    *,
    seed: int = 1,
    world_factory: Callable[[], World] | None = None,
    variant: Variant | None = None,
) -> list[tuple[Tally, float]]:
    out = []
    for name in names:
        started = time.monotonic()
        if variant is not None:
            world = World(
                seed=variant.seed,
                incidents=variant.incidents,
                limit_scale=variant.limit_scale,
                dishonesty=variant.dishonesty,
            )
        else:
            world = world_factory() if world_factory else World(seed=seed)
        catalog = bench_catalog(world.limit_scale)
        evaluation = Evaluation(world, list(catalog.offerings), variant.joins if variant else None)
        router = make_router(name, world, catalog)
        out.append((replay(router, world, evaluation, catalog, requests), time.monotonic() - started))
    return out
