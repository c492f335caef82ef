"""Tenant-scoped reads. Every query of tenant-owned data starts from a membership.

A tenant the user is not a member of does not exist for them: lookups raise Http404.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from accounts.models import User
from tenants.invitations import token_hash
from tenants.models import Invitation

# Re-exported for the console, which imports no app's models: the type its views take, and the choices its forms list.
from tenants.models import Membership as Membership
from tenants.models import Role as Role
from tenants.models import RouteMode as RouteMode
from tenants.models import Tenant as Tenant


def memberships_of(*, user: User) -> QuerySet[Membership]:
    return Membership.objects.filter(user=user).select_related("tenant").order_by("tenant__slug")


def membership_get(*, user: User, tenant_slug: str) -> Membership:
    """The user's membership in the tenant, or 404 (never 403: foreign tenants are invisible)."""
    try:
        return Membership.objects.select_related("tenant").get(user=user, tenant__slug=tenant_slug)
    except Membership.DoesNotExist:
        raise Http404("tenant not found") from None


def tenant_members(*, membership: Membership) -> QuerySet[Membership]:
    return Membership.objects.filter(tenant_id=membership.tenant_id).select_related("user").order_by("created_at")


def tenant_member_get(*, membership: Membership, member_id: int) -> Membership:
    try:
        return tenant_members(membership=membership).get(pk=member_id)
    except Membership.DoesNotExist:
        raise Http404("member not found") from None


def tenant_invitations(*, membership: Membership) -> QuerySet[Invitation]:
    return Invitation.objects.filter(tenant_id=membership.tenant_id).order_by("-created_at")


def tenant_invitation_get(*, membership: Membership, invitation_id: int) -> Invitation:
    try:
        return tenant_invitations(membership=membership).get(pk=invitation_id)
    except Invitation.DoesNotExist:
        raise Http404("invitation not found") from None


def invitation_by_token(*, token: str) -> Invitation | None:
    """The invitation a link's token names (any state), or None. Only the hash is looked up."""
    return Invitation.objects.select_related("tenant", "invited_by").filter(token_hash=token_hash(token)).first()


def tenant_of(*, membership: Membership) -> Tenant:
    return membership.tenant
