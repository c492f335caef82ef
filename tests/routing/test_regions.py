"""The router uses its own region's figures once they rest on enough probes: regions differ by
network distance (sim/network.yaml), so a gateway prefers the offering nearer to it, all else equal."""

from __future__ import annotations

import dataclasses

from contracts.keyrecord import KeyRecord
from contracts.snapshot import CatalogSnapshot, OfferingStats, StatsSnapshot
from routing.failover.health import HealthBoard
from routing.router.candidates import Need
from routing.router.prefs import ProviderPrefs
from routing.router.route import plan
from routing.router.strategy import DefaultScorer
from routing.state.estimates import REGIONAL_MIN_N
from routing.state.offerings import CatalogState
from sim.network import load_network
from tests.catalogs import sim_offerings

RECORD = KeyRecord(key_id=1, tenant_id=1, tenant_slug="t", name="k", prefix="p")
NEED = Need(input_estimate=1000, max_tokens=256, params=frozenset())
BASE_TTFT_MS = 700.0  # the same server-side TTFT on both: only the network differs


def _twins() -> CatalogSnapshot:
    """deepseek-v3.2 on deepseek (Hangzhou) and on volcengine (Beijing), made equal in all but place."""
    offerings = [o for o in sim_offerings("http://sim") if o.model == "deepseek-v3.2"]
    deepseek = next(o for o in offerings if o.provider == "deepseek")
    volcengine = dataclasses.replace(
        next(o for o in offerings if o.provider == "volcengine"),
        prices=deepseek.prices,
        cache_policy=deepseek.cache_policy,
        parameters=deepseek.parameters,
    )
    return CatalogSnapshot(version=1, generated_at=0.0, offerings=(deepseek, volcengine))


def _stats(catalog: CatalogSnapshot, n: int) -> StatsSnapshot:
    """Per-region p50 TTFT as that region's probes see it: the server's TTFT plus the matrix's round trip."""
    network = load_network()
    per_region: dict[str, dict[str, OfferingStats]] = {}
    for region, links in network.matrix.items():
        per_region[region] = {
            str(o.offering_id): OfferingStats(
                o.offering_id, n=n, ttft_p50_ms=BASE_TTFT_MS + links[network.sites[o.provider]].rtt_ms, tps_p50=50.0
            )
            for o in catalog.offerings
        }
    every = {
        str(o.offering_id): OfferingStats(o.offering_id, n=4 * n, ttft_p50_ms=BASE_TTFT_MS + 30, tps_p50=50.0)
        for o in catalog.offerings
    }
    return StatsSnapshot(version=1, generated_at=0.0, window="1h", stats={**per_region, "all": every})


def _winner(region: str, stats: StatsSnapshot, catalog: CatalogSnapshot) -> str:
    state = CatalogState(region)
    state.set_catalog(catalog)
    state.set_stats(stats)
    route = plan(
        state=state,
        health=HealthBoard(failures_to_open=3, cooldown_s=30),
        strategy=DefaultScorer(),
        record=RECORD,
        model="deepseek-v3.2",
        need=NEED,
        prefs=ProviderPrefs(),
        mode="performance",
        affinity=None,
    )
    return route.offerings[0].provider


def test_router_in_each_region_prefers_the_offering_nearer_to_it():
    catalog = _twins()
    stats = _stats(catalog, n=REGIONAL_MIN_N)
    assert _winner("beijing", stats, catalog) == "volcengine"  # 3 ms away vs 30 ms to Hangzhou
    assert _winner("shanghai", stats, catalog) == "deepseek"  # Hangzhou is 8 ms from Shanghai, Beijing 28
    assert _winner("shenzhen", stats, catalog) == "deepseek"  # 28 vs 45


def test_too_few_regional_probes_fall_back_to_every_region_figures():
    catalog = _twins()
    stats = _stats(catalog, n=REGIONAL_MIN_N - 1)
    state = CatalogState("beijing")
    state.set_catalog(catalog)
    state.set_stats(stats)
    near, far = (state.estimate(o).ttft_ms for o in sorted(catalog.offerings, key=lambda o: o.provider != "volcengine"))
    assert near == far  # both from the "all" figures: the region's 9 probes do not decide yet
    assert _winner("beijing", _stats(catalog, n=REGIONAL_MIN_N), catalog) == "volcengine"
