"""The invitation services on their own: tokens, states, one pending row per address."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import User
from foundation.api_errors import ApiError
from tenants.invitations import (
    invitation_accept,
    invitation_create,
    invitation_revoke,
    invitation_state,
    token_hash,
    user_signup_by_invitation,
)
from tenants.models import Invitation, Membership

pytestmark = pytest.mark.django_db


def test_token_is_unguessable_and_only_its_hash_is_stored(owner):
    issued = invitation_create(actor=owner, email="e@example.test", role="viewer")
    assert len(issued.token) >= 43  # 32 random bytes
    stored = Invitation.objects.get()
    assert stored.token_hash == token_hash(issued.token) and issued.token not in stored.token_hash


def test_states(owner):
    pending = invitation_create(actor=owner, email="p@example.test", role="viewer").invitation
    expired = invitation_create(actor=owner, email="x@example.test", role="viewer", ttl=timedelta(seconds=-1))
    revoked = invitation_revoke(
        invitation=invitation_create(actor=owner, email="r@example.test", role="viewer").invitation
    )
    assert invitation_state(None) == "unknown"
    assert invitation_state(pending) == "pending"
    assert invitation_state(expired.invitation) == "expired"
    assert invitation_state(revoked) == "revoked"
    assert invitation_state(pending, now=timezone.now() + timedelta(days=7, seconds=1)) == "expired"


def test_the_database_refuses_a_second_pending_row_for_one_address(owner):
    invitation_create(actor=owner, email="f@example.test", role="viewer")
    with pytest.raises(IntegrityError), transaction.atomic():
        Invitation.objects.create(
            tenant=owner.tenant,
            email="f@example.test",
            role="viewer",
            token_hash="0" * 64,
            expires_at=timezone.now() + timedelta(days=1),
        )


def test_accept_joins_with_the_invited_role_once(owner):
    issued = invitation_create(actor=owner, email="g@example.test", role="admin")
    user = User.objects.create_user(email="g@example.test", password="x-long-password-1")
    membership = invitation_accept(token=issued.token, user=user)
    assert membership.role == "admin" and membership.tenant_id == owner.tenant_id
    with pytest.raises(ApiError) as caught:
        invitation_accept(token=issued.token, user=user)
    assert caught.value.error_code == "invitation_used"


def test_signup_by_a_refused_invitation_leaves_no_account(owner):
    issued = invitation_create(actor=owner, email="h@example.test", role="viewer")
    invitation_revoke(invitation=issued.invitation)
    with pytest.raises(ApiError):
        user_signup_by_invitation(token=issued.token, email="h@example.test", name="H", password="x-long-password-1")
    assert not User.objects.filter(email="h@example.test").exists()
    assert Membership.objects.filter(tenant=owner.tenant).count() == 1
