"""Writes on BYOK credentials. The tenant's keys are republished (an outbox row) so the gateway sees the change."""

from __future__ import annotations

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog.models import Provider
from contracts.url_policy import UnsafeUrl, validate_public_url
from credentials.crypto import encrypt_secret, reencrypt
from credentials.models import ProviderCredential
from foundation.api_errors import ApiError
from outbox.models import Topic
from outbox.services import outbox_add
from tenants.models import Tenant


def _checked_base_url(base_url: str) -> str:
    if not base_url:
        return ""
    try:
        return validate_public_url(
            base_url, allow_loopback=settings.ALLOW_LOOPBACK_PROVIDER_URLS, allowed_ports=settings.BYOK_ALLOWED_PORTS
        )
    except UnsafeUrl as exc:
        raise ApiError("unsafe_url", str(exc), param="base_url") from None


def _republish(tenant: Tenant) -> None:
    outbox_add(topic=Topic.TENANT_KEYS, tenant_id=tenant.pk)


def credential_create(*, tenant: Tenant, provider: Provider, secret: str, base_url: str = "") -> ProviderCredential:
    base_url = _checked_base_url(base_url)
    try:
        with transaction.atomic():
            credential = ProviderCredential.objects.create(
                tenant=tenant,
                provider=provider,
                secret_token=encrypt_secret(secret),
                last_four=secret[-4:],
                base_url=base_url,
            )
            _republish(tenant)
    except IntegrityError:
        raise ApiError(
            "credential_exists", "this tenant already has a credential for the provider", param="provider"
        ) from None
    return credential


def credential_update(
    *, credential: ProviderCredential, secret: str | None = None, base_url: str | None = None
) -> ProviderCredential:
    with transaction.atomic():
        if secret is not None:
            credential.secret_token = encrypt_secret(secret)
            credential.last_four = secret[-4:]
            credential.rotated_at = timezone.now()
        if base_url is not None:
            credential.base_url = _checked_base_url(base_url)
        credential.save()
        _republish(credential.tenant)
    return credential


def credential_delete(*, credential: ProviderCredential) -> None:
    tenant = credential.tenant
    with transaction.atomic():
        credential.delete()
        _republish(tenant)


def credentials_reencrypt_all() -> int:
    """Re-encrypt every secret with the newest key; afterwards older keys can be retired."""
    count = 0
    with transaction.atomic():
        for credential in ProviderCredential.objects.select_for_update().order_by("pk"):
            credential.secret_token = reencrypt(credential.secret_token)
            credential.save(update_fields=["secret_token"])
            count += 1
        outbox_add(topic=Topic.ALL_KEYS)
    return count
