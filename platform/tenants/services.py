"""Writes on tenants and memberships. Invitations live in tenants/invitations.py."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import User
from foundation.api_errors import ApiError
from outbox.models import Topic
from outbox.services import outbox_add
from tenants.models import BillingMode, Membership, Role, Tenant
from tenants.permissions import may_assign_role

# Fields whose change alters what the gateway enforces: every key of the tenant is republished.
GATEWAY_FIELDS = frozenset(
    {
        "default_route_mode",
        "allowed_providers",
        "blocked_providers",
        "rpm_limit",
        "tpm_limit",
        "max_concurrency",
        "billing_mode",
        "markup_bps",
        "monthly_spend_limit_micros",
        "model_family_fallback",
    }
)


def tenant_create(*, slug: str, name: str, owner: User) -> Tenant:
    """Create a tenant; its creator becomes the owner; the gateway learns its (zero) balance."""
    try:
        with transaction.atomic():
            tenant = Tenant.objects.create(slug=slug, name=name)
            Membership.objects.create(tenant=tenant, user=owner, role=Role.OWNER)
            outbox_add(topic=Topic.BALANCE_ENSURE, tenant_id=tenant.pk)
    except IntegrityError:
        raise ApiError("slug_taken", f"the slug {slug!r} is already taken", param="slug") from None
    return tenant


def tenant_update(*, tenant: Tenant, **fields: Any) -> Tenant:
    """Update tenant settings; limits, routing or billing changes reach the gateway after commit."""
    changed = [name for name, value in fields.items() if getattr(tenant, name) != value]
    if not changed:
        return tenant
    credit_before = _credit_micros(tenant)
    with transaction.atomic():
        for name in changed:
            setattr(tenant, name, fields[name])
        tenant.save(update_fields=changed)
        if GATEWAY_FIELDS.intersection(changed):
            outbox_add(topic=Topic.TENANT_KEYS, tenant_id=tenant.pk)
        if (credit_delta := _credit_micros(tenant) - credit_before) != 0:
            # A billing mode or credit limit change reaches the gateway's balance counter at once (not after
            # reconciliation). Race: requests settle against the counter meanwhile; moving it by the difference
            # keeps their holds and charges, where a SET from the ledger would lose the ones not yet ingested.
            outbox_add(topic=Topic.BALANCE_ADJUST, tenant_id=tenant.pk, delta_micros=credit_delta)
    return tenant


def tenant_settings_update(*, tenant: Tenant, **fields: Any) -> Tenant:
    """A member's change through the management API. Switching to postpaid needs a Stripe customer with a
    payment method on file (``POST .../billing/postpaid`` adds one and switches): without it the switch is
    refused and nothing changes, since usage Stripe cannot bill would pile up unbilled."""
    switching = fields.get("billing_mode") == BillingMode.POSTPAID and tenant.billing_mode != BillingMode.POSTPAID
    with transaction.atomic():
        # Race: a payment method set by a concurrent postpaid_enable; the row lock reads the committed one.
        locked = Tenant.objects.select_for_update().only("stripe_customer_id", "stripe_payment_method_id")
        row = locked.get(pk=tenant.pk)
        if switching and not (row.stripe_customer_id and row.stripe_payment_method_id):
            raise ApiError(
                "payment_method_required",
                f"postpaid usage is billed to a card on file: add one with POST /api/v1/tenants/{tenant.slug}"
                '/billing/postpaid {"payment_method": "pm_..."}, which also switches the tenant to postpaid',
                param="billing_mode",
                status_code=409,
            )
        return tenant_update(tenant=tenant, **fields)


def tenant_payment_method_set(*, tenant: Tenant, customer_id: str, payment_method_id: str) -> Tenant:
    """Record the Stripe customer and the payment method Stripe accepted for it (metering.billing)."""
    return tenant_update(tenant=tenant, stripe_customer_id=customer_id, stripe_payment_method_id=payment_method_id)


def _credit_micros(tenant: Tenant) -> int:
    """What the gateway may lend the tenant beyond its balance: the credit limit, when postpaid."""
    return tenant.credit_limit_micros if tenant.billing_mode == BillingMode.POSTPAID else 0


def _owner_count(tenant_id: int) -> int:
    return Membership.objects.filter(tenant_id=tenant_id, role=Role.OWNER).count()


def _check_may_touch(*, actor: Membership, target: Membership) -> None:
    if target.role == Role.OWNER and actor.role != Role.OWNER:
        raise ApiError("permission_denied", "only an owner may change or remove an owner", status_code=403)


def membership_change_role(*, actor: Membership, member: Membership, role: str) -> Membership:
    _check_may_touch(actor=actor, target=member)
    if not may_assign_role(actor.role, role):
        raise ApiError("permission_denied", f"you may not grant the role {role!r}", param="role", status_code=403)
    with transaction.atomic():
        # Lock the tenant's owner rows so two demotions cannot both pass the last-owner check.
        list(Membership.objects.select_for_update().filter(tenant_id=member.tenant_id, role=Role.OWNER))
        if member.role == Role.OWNER and role != Role.OWNER and _owner_count(member.tenant_id) <= 1:
            raise ApiError("last_owner", "a tenant must keep at least one owner", param="role")
        member.role = role
        member.save(update_fields=["role"])
    return member


def membership_remove(*, actor: Membership, member: Membership) -> None:
    _check_may_touch(actor=actor, target=member)
    with transaction.atomic():
        list(Membership.objects.select_for_update().filter(tenant_id=member.tenant_id, role=Role.OWNER))
        if member.role == Role.OWNER and _owner_count(member.tenant_id) <= 1:
            raise ApiError("last_owner", "a tenant must keep at least one owner")
        member.delete()
