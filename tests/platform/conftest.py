from __future__ import annotations

import pytest


@pytest.fixture
def victim(tenant, owner, redis_client):
    """Ids of one object of each tenant-owned kind in ``tenant``, keyed by URL parameter name."""
    from credentials.services import credential_create
    from tenants.invitations import invitation_create
    from tests.factories import MembershipFactory, ProviderFactory, issue_key

    provider = ProviderFactory(slug="victim-provider")
    developer = MembershipFactory(tenant=tenant, role="developer")
    api_key, _ = issue_key(tenant, created_by=owner.user)
    return {
        "tenant_slug": tenant.slug,
        "member_id": developer.pk,
        "invitation_id": invitation_create(actor=owner, email="new@example.test", role="viewer").invitation.pk,
        "key_id": api_key.pk,
        "credential_id": credential_create(tenant=tenant, provider=provider, secret="sk-victim-123456").pk,
    }
