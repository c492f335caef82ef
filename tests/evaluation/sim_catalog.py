"""OfferingSnapshots of the simulated fleet's catalog, pointed at a running fleet (tests and bench)."""

from __future__ import annotations

from contracts.snapshot import CatalogSnapshot, OfferingSnapshot
from sim.catalog import load_catalog


def sim_offerings(base_url: str, *, first_id: int = 1) -> list[OfferingSnapshot]:
    offerings = []
    next_id = first_id
    for slug, provider in sorted(load_catalog().items()):
        for spec in provider.offerings:
            offerings.append(
                OfferingSnapshot(
                    offering_id=next_id,
                    model=spec.model,
                    provider=slug,
                    upstream_model=spec.upstream_model,
                    dialect=spec.dialect,
                    base_url=f"{base_url}/{slug}/v1",
                    usage_dialect=spec.usage_dialect,
                    cached_tokens_in_input=spec.cached_tokens_in_input,
                    prices=spec.prices,
                    context_window=spec.context_window,
                    max_output=spec.max_output,
                    parameters=spec.parameters,
                    status=spec.status,
                    keeps_billing_block=spec.keeps_billing_block,
                    cache_policy=spec.cache_policy,
                    cache_ttl_s=spec.cache_ttl_s,
                )
            )
            next_id += 1
    return offerings


def sim_catalog(base_url: str) -> CatalogSnapshot:
    return CatalogSnapshot(version=1, generated_at=0.0, offerings=tuple(sim_offerings(base_url)))
