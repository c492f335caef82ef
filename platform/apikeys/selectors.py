"""Tenant-scoped reads of API keys."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone

from apikeys.models import ApiKey as ApiKey  # re-exported: the console types its views with it
from contracts.apikey_format import hash_key, is_well_formed
from tenants.models import Membership


def tenant_keys(*, membership: Membership) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(tenant_id=membership.tenant_id).select_related("created_by").order_by("-created_at")


def tenant_key_get(*, membership: Membership, key_id: int) -> ApiKey:
    try:
        return tenant_keys(membership=membership).get(pk=key_id)
    except ApiKey.DoesNotExist:
        raise Http404("key not found") from None


def usable_key_for_plaintext(plaintext: str, *, pepper: str) -> ApiKey | None:
    """Format and checksum first (no query for junk), then the HMAC lookup; revoked/expired -> None."""
    if not is_well_formed(plaintext):
        return None
    api_key = ApiKey.objects.select_related("tenant").filter(key_hash=hash_key(plaintext, pepper)).first()
    if api_key is None or api_key.revoked_at is not None:
        return None
    if api_key.expires_at is not None and api_key.expires_at <= timezone.now():
        return None
    return api_key
