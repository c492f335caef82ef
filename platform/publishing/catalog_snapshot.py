"""Publish the catalog snapshot (contracts.snapshot.CatalogSnapshot) for the gateway."""

from __future__ import annotations

import logging
import time

import redis

from catalog.models import Model, Offering
from catalog.selectors import current_price, offerings_with_current_price
from contracts import redis_keys
from contracts.snapshot import CatalogSnapshot, ModelSnapshot, OfferingSnapshot
from contracts.usage import Prices
from tokenway.redis_client import get_redis

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


def publish_catalog() -> int:
    """SET the snapshot and INCR its version in one MULTI; WATCH keeps the document's version equal to the key."""
    client = get_redis()
    with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(redis_keys.CATALOG_VERSION)
                version = int(pipe.get(redis_keys.CATALOG_VERSION) or 0) + 1
                snapshot = build_catalog_snapshot(version)
                pipe.multi()
                pipe.set(redis_keys.CATALOG_SNAPSHOT, snapshot.to_json())
                pipe.incr(redis_keys.CATALOG_VERSION)
                pipe.execute()
                break
            except redis.WatchError:  # another publisher won the race; rebuild with the next version
                continue
    client.publish(redis_keys.SNAPSHOT_CHANNEL, "catalog")
    logger.info("published catalog snapshot v%d with %d offerings", version, len(snapshot.offerings))
    return version
