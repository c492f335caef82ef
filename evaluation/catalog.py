"""The offerings to probe: the platform's CatalogSnapshot in Redis, or built from the database.

Workers read the published snapshot (what the gateway routes on). When none is
published yet (fresh install, tests) the same shape is built from the catalog tables,
resolving provider defaults the way docs/catalog-format.md describes.
"""

from __future__ import annotations

import time

from django.conf import settings

from catalog.models import Offering, OfferingPrice
from contracts import redis_keys
from contracts.snapshot import CatalogSnapshot, OfferingSnapshot
from contracts.usage import Prices
from tokenway.redis_client import get_redis


def _pick(own: object, inherited: object) -> object:
    return inherited if own in (None, "") else own


def _prices(offering: Offering) -> Prices:
    versions: list[OfferingPrice] = list(offering.prices.all())  # prefetched
    if not versions:
        return Prices(input=0, output=0)
    return Prices(
        input=(latest := max(versions, key=lambda p: p.version)).input,
        output=latest.output,
        cache_read=latest.cache_read,
        cache_write_5m=latest.cache_write_5m,
        cache_write_1h=latest.cache_write_1h,
        reasoning=latest.reasoning,
        version=latest.version,
    )


def offering_snapshot(offering: Offering) -> OfferingSnapshot:
    provider = offering.provider
    base_url = str(_pick(offering.base_url, provider.base_url)).replace("${SIM_BASE_URL}", settings.SIM_BASE_URL)
    return OfferingSnapshot(
        offering_id=offering.pk,
        model=offering.model.slug,
        provider=provider.slug,
        upstream_model=offering.upstream_model or offering.model.slug,
        dialect=str(_pick(offering.dialect, provider.dialect)),
        base_url=base_url,
        usage_dialect=str(_pick(offering.usage_dialect, provider.usage_dialect)),
        cached_tokens_in_input=bool(_pick(offering.cached_tokens_in_input, provider.cached_tokens_in_input)),
        prices=_prices(offering),
        context_window=offering.context_window,
        max_output=offering.max_output,
        parameters=tuple(offering.parameters or ()),
        rpm=offering.rpm,
        tpm=offering.tpm,
        status=offering.status,
        keeps_billing_block=bool(_pick(offering.keeps_billing_block, provider.keeps_billing_block)),
        cache_policy=str(_pick(offering.cache_policy, provider.cache_policy)),
        cache_ttl_s=int(str(_pick(offering.cache_ttl_s, provider.cache_ttl_s))),
        quality=offering.model.quality,
        api_key_env=provider.api_key_env,
    )


def catalog_from_db() -> CatalogSnapshot:
    rows = Offering.objects.select_related("model", "provider").prefetch_related("prices").order_by("pk")
    return CatalogSnapshot(version=0, generated_at=time.time(), offerings=tuple(offering_snapshot(o) for o in rows))


def current_catalog() -> CatalogSnapshot:
    raw = get_redis().get(redis_keys.CATALOG_SNAPSHOT)
    if raw:
        return CatalogSnapshot.from_json(raw)
    return catalog_from_db()


def probed_offerings(catalog: CatalogSnapshot) -> dict[int, OfferingSnapshot]:
    """Active and degraded offerings are probed (degraded ones must be able to recover); disabled are not."""
    return {o.offering_id: o for o in catalog.offerings if o.status != "disabled"}
