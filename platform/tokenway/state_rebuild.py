"""Put back what the gateway reads from Redis after Redis lost it (a restart without persistence).

``STATE_MARKER`` is set once keys, catalog and statistics snapshots and balances are
published. Its absence means either a first start or a Redis that came back empty;
either way everything is published again, which is idempotent (key records and the
snapshots are overwritten, balances are set from the ledger only where missing),
and only then the marker is set, so a crash half-way republishes again next time.
"""

from __future__ import annotations

import logging
import os

from contracts.redis_keys import STATE_MARKER
from evaluation.services.snapshot import build_snapshot, snapshot_publish
from foundation.redis_client import get_redis
from publishing.everything import gateway_state_publish

logger = logging.getLogger(__name__)


def redis_state_ensure() -> bool:
    """Republish when the marker is missing; True when it did."""
    client = get_redis()
    if client.exists(STATE_MARKER):
        return False
    logger.warning("redis has no published state (first start or restarted empty): republishing")
    published = gateway_state_publish()  # catalog, key records, balances (from the ledger)
    snapshot_publish(client=client, snapshot=build_snapshot())
    client.set(STATE_MARKER, os.urandom(8).hex())
    logger.warning("republished the catalog, statistics, %d key records and balances", published.keys)
    return True
