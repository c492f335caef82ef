"""Tenant-scoped reads of provider credentials."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from credentials.models import ProviderCredential
from tenants.models import Membership


def tenant_credentials(*, membership: Membership) -> QuerySet[ProviderCredential]:
    return ProviderCredential.objects.filter(tenant_id=membership.tenant_id).select_related("provider").order_by("id")


def tenant_credential_get(*, membership: Membership, credential_id: int) -> ProviderCredential:
    try:
        return tenant_credentials(membership=membership).get(pk=credential_id)
    except ProviderCredential.DoesNotExist:
        raise Http404("credential not found") from None


def byok_tokens_for_tenant(*, tenant_id: int) -> dict[str, str]:
    """{provider slug: Fernet token} for the gateway's key record."""
    rows = ProviderCredential.objects.filter(tenant_id=tenant_id).values_list("provider__slug", "secret_token")
    return dict(rows)


def byok_base_urls_for_tenant(*, tenant_id: int) -> dict[str, str]:
    """{provider slug: the tenant's own endpoint} for credentials that name one."""
    rows = (
        ProviderCredential.objects.filter(tenant_id=tenant_id)
        .exclude(base_url="")
        .values_list("provider__slug", "base_url")
    )
    return dict(rows)
