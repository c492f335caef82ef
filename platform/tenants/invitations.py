"""Invitations by single-use, expiring token. Only the token's SHA-256 is stored."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import User
from tenants.models import Invitation, Membership, Tenant
from tenants.permissions import may_assign_role
from tokenway.api_errors import ApiError

INVITATION_TTL = timedelta(days=7)  # long enough for a weekend, short enough to limit leaked links


@dataclass(frozen=True)
class IssuedInvitation:
    invitation: Invitation
    token: str  # shown once, sent by email


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_create(*, actor: Membership, email: str, role: str, ttl: timedelta = INVITATION_TTL) -> IssuedInvitation:
    if not may_assign_role(actor.role, role):
        raise ApiError("permission_denied", f"you may not invite with the role {role!r}", param="role", status_code=403)
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        tenant_id=actor.tenant_id,
        email=email.lower(),
        role=role,
        token_hash=token_hash(token),
        invited_by=actor.user,
        expires_at=timezone.now() + ttl,
    )
    return IssuedInvitation(invitation=invitation, token=token)


def invitation_revoke(*, invitation: Invitation) -> Invitation:
    if invitation.accepted_at is None and invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation


def invitation_accept(*, token: str, user: User) -> Membership:
    """Join the tenant. The row lock makes a token usable once even under concurrent accepts."""
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().filter(token_hash=token_hash(token)).first()
        if invitation is None:
            raise ApiError("invitation_not_found", "no invitation matches this token", param="token", status_code=404)
        if invitation.accepted_at is not None or invitation.revoked_at is not None:
            raise ApiError("invitation_used", "this invitation was already used or revoked", param="token")
        if invitation.expires_at <= timezone.now():
            raise ApiError("invitation_expired", "this invitation has expired", param="token")
        if Membership.objects.filter(tenant_id=invitation.tenant_id, user=user).exists():
            raise ApiError("already_member", "you are already a member of this tenant", param="token")
        invitation.accepted_at = timezone.now()
        invitation.save(update_fields=["accepted_at"])
        try:
            return Membership.objects.create(tenant_id=invitation.tenant_id, user=user, role=invitation.role)
        except IntegrityError:
            raise ApiError("already_member", "you are already a member of this tenant") from None


def tenant_for_invitation(invitation: Invitation) -> Tenant:
    return invitation.tenant
