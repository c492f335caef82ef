"""Key records in Redis for the gateway (contracts.keyrecord, contracts.redis_keys).

A usable key has its KeyRecord JSON under ``key_record(hash)`` (expiring with the key);
a revoked or expired key has none. Every change bumps ``KEYS_VERSION`` and publishes
the hash on ``KEYS_CHANNEL`` so every gateway drops its cached copy within a second.

Records live in many cluster slots, so they are written by a plain pipeline (one round trip
per node) and the version is bumped after they are all written: a gateway that sees the new
version reads the new records.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import redis
from django.utils import timezone

from apikeys.models import ApiKey
from contracts import redis_keys
from contracts.keyrecord import KeyRecord, Limits, RoutingPrefs
from credentials.selectors import byok_base_urls_for_tenant, byok_tokens_for_tenant
from foundation.redis_client import get_redis
from tenants.models import BillingMode, Tenant

logger = logging.getLogger(__name__)
SCAN_BATCH = 500  # keys per SCAN step when pruning stale records at startup


def is_usable(api_key: ApiKey) -> bool:
    if api_key.revoked_at is not None:
        return False
    return api_key.expires_at is None or api_key.expires_at > timezone.now()


def key_record_for(api_key: ApiKey, *, byok: dict[str, str] | None = None) -> KeyRecord:
    tenant = api_key.tenant
    return KeyRecord(
        key_id=api_key.pk,
        tenant_id=tenant.pk,
        tenant_slug=tenant.slug,
        name=api_key.name,
        prefix=api_key.prefix,
        live=api_key.live,
        allowed_models=tuple(api_key.allowed_models) if api_key.allowed_models is not None else None,
        allowed_route_modes=tuple(api_key.allowed_route_modes) if api_key.allowed_route_modes is not None else None,
        usage_read=api_key.usage_read,
        key_limits=Limits(rpm=api_key.rpm_limit, tpm=api_key.tpm_limit, max_concurrency=api_key.max_concurrency),
        tenant_limits=Limits(rpm=tenant.rpm_limit, tpm=tenant.tpm_limit, max_concurrency=tenant.max_concurrency),
        monthly_budget_micros=api_key.monthly_budget_micros,
        key_route_mode=api_key.default_route_mode or None,
        tenant_routing=RoutingPrefs(
            default_mode=tenant.default_route_mode,
            allowed_providers=tuple(tenant.allowed_providers or ()),
            blocked_providers=tuple(tenant.blocked_providers or ()),
        ),
        expires_at=api_key.expires_at.timestamp() if api_key.expires_at else None,
        byok=byok if byok is not None else byok_tokens_for_tenant(tenant_id=tenant.pk),
        byok_base_urls=byok_base_urls_for_tenant(tenant_id=tenant.pk),
        markup_bps=tenant.markup_bps,
        postpaid=tenant.billing_mode == BillingMode.POSTPAID,
        tenant_monthly_spend_limit_micros=tenant.monthly_spend_limit_micros,
        model_family_fallback=_family_fallback(api_key, tenant),
    )


def _family_fallback(api_key: ApiKey, tenant: Tenant) -> bool:
    """The key's own setting when it has one, else the tenant's."""
    own = api_key.model_family_fallback
    return tenant.model_family_fallback if own is None else own


def _publish(keys: Iterable[ApiKey], *, byok: dict[str, str] | None = None) -> int:
    client = get_redis()
    pipe = client.pipeline(transaction=False)
    hashes = []
    for api_key in keys:
        name = redis_keys.key_record(api_key.key_hash)
        if is_usable(api_key):
            pipe.set(name, key_record_for(api_key, byok=byok).to_json())
            if api_key.expires_at is not None:
                pipe.expireat(name, api_key.expires_at)
        else:
            pipe.delete(name)
        hashes.append(api_key.key_hash)
    if not hashes:
        return 0
    pipe.execute()
    _announce(client, hashes)
    return len(hashes)


def _announce(client: redis.Redis, messages: list[str]) -> None:
    """Bump the version, then tell subscribed gateways (PUBLISH reaches every node's subscribers)."""
    client.incr(redis_keys.KEYS_VERSION)
    for message in messages:
        client.publish(redis_keys.KEYS_CHANNEL, message)


def publish_key(api_key: ApiKey) -> None:
    _publish([api_key])


def publish_tenant_keys(tenant: Tenant) -> int:
    keys = ApiKey.objects.filter(tenant=tenant).select_related("tenant")
    return _publish(keys, byok=byok_tokens_for_tenant(tenant_id=tenant.pk))


def publish_all_keys() -> int:
    """Startup: write every usable key, delete records of keys that are gone, tell gateways to drop caches."""
    client = get_redis()
    known: set[str] = set()
    count = 0
    for tenant in Tenant.objects.all():
        count += publish_tenant_keys(tenant)
        known.update(ApiKey.objects.filter(tenant=tenant).values_list("key_hash", flat=True))
    stale = [
        name
        for name in client.scan_iter(match=redis_keys.key_record("*"), count=SCAN_BATCH)
        if name.decode().removeprefix(redis_keys.key_record("")) not in known
    ]
    pipe = client.pipeline(transaction=False)
    for name in stale:
        pipe.delete(name)
    pipe.execute()
    _announce(client, ["*"])
    logger.info("published %d key records, removed %d stale", count, len(stale))
    return count
