"""The one test catalog: the simulated fleet's catalog file (demo/catalog.yaml) as the platform publishes it.

``sim_catalog`` is the snapshot the gateway and the probes read, pointed at a running fleet (tests and
bench); ``apply_catalog_file`` loads a catalog file into the database the way ``load_catalog`` does.
Both read the file through contracts.catalog_file, the reader the platform and the fleet use.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contracts.snapshot import CatalogSnapshot, ModelSnapshot, OfferingSnapshot
from sim.fleet_spec import load_catalog, load_models

ProviderUrl = Callable[[str], str]  # provider slug -> its OpenAI-style base URL (SimHandle.provider_url)


def _url_of(provider_url: ProviderUrl | str) -> ProviderUrl:
    if isinstance(provider_url, str):  # the fleet's base URL
        base = provider_url.rstrip("/")
        return lambda slug: f"{base}/{slug}/v1"
    return provider_url


def sim_offerings(provider_url: ProviderUrl | str, *, first_id: int = 1) -> list[OfferingSnapshot]:
    """Every offering of the fleet's catalog in file order, numbered from ``first_id``."""
    url_of = _url_of(provider_url)
    specs = [spec for provider in load_catalog().values() for spec in provider.offerings]
    return [
        OfferingSnapshot(
            offering_id=offering_id,
            model=spec.model,
            provider=spec.provider,
            upstream_model=spec.upstream_model,
            dialect=spec.dialect,
            base_url=url_of(spec.provider),
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
            max_reasoning_tokens=spec.max_reasoning_tokens,
        )
        for offering_id, spec in enumerate(specs, start=first_id)
    ]


def sim_catalog(provider_url: ProviderUrl | str, *, version: int = 1) -> CatalogSnapshot:
    """The fleet's catalog snapshot (offerings and model names), as ``publishing.catalog_snapshot`` would build it."""
    models = tuple(ModelSnapshot(m.slug, m.author, m.aliases) for m in load_models())
    return CatalogSnapshot(
        version=version, generated_at=time.time(), offerings=tuple(sim_offerings(provider_url)), models=models
    )


def apply_catalog_file(path: Path, *, sim_base_url: str) -> Any:
    """Load a catalog file into the database (no publish); returns the CatalogDiff. Needs Django."""
    from catalog.services import catalog_apply
    from contracts.catalog_file import parse_catalog

    spec = parse_catalog(path.read_text(encoding="utf-8"), filename=path.name, sim_base_url=sim_base_url)
    return catalog_apply(spec=spec, publish=False)
