"""All the gateway's state at once: at startup, after seeding, and when Redis came back empty."""

from __future__ import annotations

from dataclasses import dataclass

from publishing.catalog_snapshot import publish_catalog
from publishing.keys import publish_all_keys
from publishing.money_counters import balances_ensure_all


@dataclass(frozen=True)
class Published:
    catalog_version: int
    keys: int
    tenants: int


def gateway_state_publish() -> Published:
    """Catalog snapshot, every key record (stale ones removed), every balance counter (where missing)."""
    version = publish_catalog()
    keys = publish_all_keys()
    tenants = balances_ensure_all()
    return Published(catalog_version=version, keys=keys, tenants=tenants)
