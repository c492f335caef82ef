"""The offerings to probe: the platform's CatalogSnapshot in Redis, or built from the database.

Workers read the published snapshot (what the gateway routes on). When none is
published yet (fresh install, tests) it is built from the catalog tables by the same
function the platform publishes with.
"""

from __future__ import annotations

from contracts import redis_keys
from contracts.snapshot import CatalogSnapshot, OfferingSnapshot
from evaluation.probes.registry import is_embedding
from foundation.redis_client import get_redis
from publishing.catalog_snapshot import build_catalog_snapshot


def catalog_from_db() -> CatalogSnapshot:
    """The snapshot the platform would publish, built now (version 0: not published)."""
    return build_catalog_snapshot(0)


def current_catalog() -> CatalogSnapshot:
    raw = get_redis().get(redis_keys.CATALOG_SNAPSHOT)
    if raw:
        return CatalogSnapshot.from_json(raw)
    return catalog_from_db()


def probed_offerings(catalog: CatalogSnapshot) -> dict[int, OfferingSnapshot]:
    """Active and degraded offerings are probed (degraded ones must be able to recover); disabled are not.
    Embedding offerings get their own probes (probes/registry.py ``probe_for``)."""
    return {o.offering_id: o for o in catalog.offerings if o.status != "disabled"}


def embedding_ids(offerings: dict[int, OfferingSnapshot]) -> frozenset[int]:
    """The embedding offerings among these (their probes are the embedding probe's kinds only)."""
    return frozenset(oid for oid, offering in offerings.items() if is_embedding(offering))
