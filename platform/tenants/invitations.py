"""Invitations by single-use, expiring token. Only the token's SHA-256 is stored.

An address has at most one pending invitation per tenant (a partial unique constraint holds it):
inviting it again re-issues that row with a fresh token and expiry, so the earlier link stops working.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from foundation.api_errors import ApiError
from tenants.models import Invitation, Membership, Tenant
from tenants.permissions import may_assign_role

INVITATION_TTL = timedelta(days=7)  # long enough for a weekend, short enough to limit leaked links


@dataclass(frozen=True)
class IssuedInvitation:
    invitation: Invitation
    token: str  # shown once, sent by email
    resent: bool = False  # True when a pending invitation was re-issued instead of created
    previous_role: str = ""  # a re-issue's role before it ("" for a new invitation): the caller says a change


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_state(invitation: Invitation | None, *, now: datetime | None = None) -> str:
    """One of ``unknown``, ``accepted``, ``revoked``, ``expired``, ``pending``."""
    if invitation is None:
        return "unknown"
    if invitation.accepted_at is not None:
        return "accepted"
    if invitation.revoked_at is not None:
        return "revoked"
    return "expired" if invitation.expires_at <= (now or timezone.now()) else "pending"


def _check_may_invite(*, actor: Membership, email: str, role: str) -> None:
    if not may_assign_role(actor.role, role):
        raise ApiError("permission_denied", f"you may not invite with the role {role!r}", param="role", status_code=403)
    if Membership.objects.filter(tenant_id=actor.tenant_id, user__email__iexact=email).exists():
        raise ApiError("already_member", _("%(email)s is already a member.") % {"email": email}, param="email")


def _reissue(invitation: Invitation, *, actor: Membership, role: str, token: str, ttl: timedelta) -> None:
    invitation.role = role
    invitation.token_hash = token_hash(token)
    invitation.invited_by = actor.user
    invitation.expires_at = timezone.now() + ttl
    invitation.save(update_fields=["role", "token_hash", "invited_by", "expires_at"])


def invitation_create(*, actor: Membership, email: str, role: str, ttl: timedelta = INVITATION_TTL) -> IssuedInvitation:
    """Invite ``email``, or re-issue its pending invitation (new token, new expiry, the given role)."""
    email = email.strip().lower()
    _check_may_invite(actor=actor, email=email, role=role)
    token = secrets.token_urlsafe(32)
    pending = Invitation.objects.filter(
        tenant_id=actor.tenant_id, email=email, accepted_at__isnull=True, revoked_at__isnull=True
    )
    try:
        with transaction.atomic():
            # Race: two invites of one address at once. The row lock serialises re-issues; two creates
            # collide on the partial unique constraint and the loser re-issues the winner's row below.
            existing = pending.select_for_update().first()
            if existing is not None:
                previous = existing.role
                _reissue(existing, actor=actor, role=role, token=token, ttl=ttl)
                return IssuedInvitation(invitation=existing, token=token, resent=True, previous_role=previous)
            invitation = Invitation.objects.create(
                tenant_id=actor.tenant_id,
                email=email,
                role=role,
                token_hash=token_hash(token),
                invited_by=actor.user,
                expires_at=timezone.now() + ttl,
            )
    except IntegrityError:
        with transaction.atomic():
            existing = pending.select_for_update().get()
            previous = existing.role
            _reissue(existing, actor=actor, role=role, token=token, ttl=ttl)
        return IssuedInvitation(invitation=existing, token=token, resent=True, previous_role=previous)
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
        state = invitation_state(invitation)
        if invitation is None:
            raise ApiError("invitation_not_found", "no invitation matches this token", param="token", status_code=404)
        if state in ("accepted", "revoked"):
            raise ApiError("invitation_used", "this invitation was already used or revoked", param="token")
        if state == "expired":
            raise ApiError("invitation_expired", "this invitation has expired", param="token")
        if user.email.lower() != invitation.email:
            raise ApiError(
                "invitation_email_mismatch",
                _("This invitation is for another email address."),
                param="token",
                status_code=403,
            )
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


def user_signup_by_invitation(*, token: str, email: str, name: str, password: str) -> Membership:
    """Create the account and join in one transaction: a refused invitation leaves no account behind."""
    with transaction.atomic():
        user = User.objects.create_user(email=email, password=password, name=name)
        return invitation_accept(token=token, user=user)
