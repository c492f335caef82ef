"""Fixtures of the evaluation tests: a simulated fleet on loopback, its catalog published in Redis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from contracts import redis_keys
from contracts.snapshot import CatalogSnapshot
from sim.server import SimHandle, start_in_thread
from tests.catalogs import sim_catalog


@pytest.fixture(scope="session")
def sim() -> Iterator[SimHandle]:
    handle = start_in_thread(seed=7, time_scale=0.0)  # zero latency: functional checks, not timing
    yield handle
    handle.stop()


@pytest.fixture
def catalog(sim: SimHandle, redis_client) -> CatalogSnapshot:
    snapshot = sim_catalog(sim.base_url)
    redis_client.set(redis_keys.CATALOG_SNAPSHOT, snapshot.to_json())
    return snapshot


def find(catalog: CatalogSnapshot, provider: str, model: str | None = None):
    return next(o for o in catalog.offerings if o.provider == provider and (model is None or o.model == model))
