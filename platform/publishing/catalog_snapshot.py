"""Publish the catalog snapshot (contracts.snapshot.CatalogSnapshot) for the gateway."""

from __future__ import annotations

import logging
import time

from catalog.models import Model, Offering
from catalog.selectors import current_price, integrity_pending, offerings_with_current_price
from contracts import redis_keys
from contracts.snapshot import CatalogSnapshot, ModelSnapshot, OfferingSnapshot
from contracts.usage import Prices
from foundation.redis_client import get_redis

logger = logging.getLogger(__name__)


def _override(value: object, default: object) -> object:
    return default if value in (None, "") else value


def offering_snapshot(offering: Offering) -> OfferingSnapshot | None:
    price = current_price(offering)
    if price is None:
        return None
    provider = offering.provider
    return OfferingSnapshot(
        offering_id=offering.pk,
        model=offering.model.slug,
        provider=provider.slug,
        upstream_model=offering.upstream_model,
        dialect=str(_override(offering.dialect, provider.dialect)),
        base_url=str(_override(offering.base_url, provider.base_url)),
        usage_dialect=str(_override(offering.usage_dialect, provider.usage_dialect)),
        cached_tokens_in_input=bool(_override(offering.cached_tokens_in_input, provider.cached_tokens_in_input)),
        prices=Prices(
            input=price.input,
            output=price.output,
            cache_read=price.cache_read,
            cache_write_5m=price.cache_write_5m,
            cache_write_1h=price.cache_write_1h,
            reasoning=price.reasoning,
            version=price.version,
        ),
        context_window=offering.context_window,
        max_output=offering.max_output,
        parameters=tuple(offering.parameters or ()),
        rpm=offering.rpm,
        tpm=offering.tpm,
        status=offering.status,
        keeps_billing_block=bool(_override(offering.keeps_billing_block, provider.keeps_billing_block)),
        cache_policy=str(_override(offering.cache_policy, provider.cache_policy)),
        cache_ttl_s=int(_override(offering.cache_ttl_s, provider.cache_ttl_s)),  # type: ignore[call-overload]
        quality=offering.model.quality,
        api_key_env=provider.api_key_env,
        max_reasoning_tokens=offering.max_reasoning_tokens,
        integrity_pending=integrity_pending(offering, price),
    )


def model_snapshots() -> tuple[ModelSnapshot, ...]:
    """Every model in catalog order (creation order: the file's order when it was loaded)."""
    return tuple(
        ModelSnapshot(slug=m.slug, author=m.author, aliases=tuple(m.aliases or ()))
        for m in Model.objects.order_by("pk")
    )


def build_catalog_snapshot(version: int) -> CatalogSnapshot:
    offerings = [snap for o in offerings_with_current_price() if (snap := offering_snapshot(o)) is not None]
    return CatalogSnapshot(
        version=version, generated_at=time.time(), offerings=tuple(offerings), models=model_snapshots()
    )


# KEYS: snapshot. ARGV: the new document, its version. Replaces a document of a lower version only;
# returns 0 when stored, else the version of the document already there.
SET_IF_NEWER = """
local current = redis.call('GET', KEYS[1])
if current then
  local stored = tonumber(cjson.decode(current)['version'])
  if stored >= tonumber(ARGV[2]) then return stored end
end
redis.call('SET', KEYS[1], ARGV[1])
return 0
"""
# KEYS: version. ARGV: version. Raises the counter to it, never lowers it.
RAISE_VERSION = """
if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
"""


def publish_catalog() -> int:
    """SET the snapshot, then raise its version key to the document's version.

    The two keys are in different cluster slots, so no MULTI. Race: two publishers read the same
    version and build the same number; the script keeps the first document and the loser rebuilds
    above the stored one (so a winner that died before raising the key cannot stall it). The
    version key moves only after its document is stored, so a gateway that sees a new version
    reads that document or a newer one.
    """
    client = get_redis()
    stored = 0
    while True:
        version = max(int(client.get(redis_keys.CATALOG_VERSION) or 0), stored) + 1
        snapshot = build_catalog_snapshot(version)
        stored = int(client.eval(SET_IF_NEWER, 1, redis_keys.CATALOG_SNAPSHOT, snapshot.to_json(), version))
        if not stored:
            break
    client.eval(RAISE_VERSION, 1, redis_keys.CATALOG_VERSION, version)
    client.publish(redis_keys.SNAPSHOT_CHANNEL, "catalog")
    logger.info("published catalog snapshot v%d with %d offerings", version, len(snapshot.offerings))
    return version
