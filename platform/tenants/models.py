"""Tenants (organisations that pay), their members and invitations."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    OWNER = "owner", _("Owner")
    ADMIN = "admin", _("Admin")
    DEVELOPER = "developer", _("Developer")
    BILLING = "billing", _("Billing")
    VIEWER = "viewer", _("Viewer")


class RouteMode(models.TextChoices):
    BALANCED = "balanced", _("Balanced")
    COST = "cost", _("Cost")
    PERFORMANCE = "performance", _("Performance")
    QUALITY = "quality", _("Quality")


class BillingMode(models.TextChoices):
    PREPAID = "prepaid", "Prepaid"
    POSTPAID = "postpaid", "Postpaid (invoiced monthly)"


class Tenant(models.Model):
    slug = models.SlugField(max_length=63, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # Routing preferences (defaults for every key of the tenant).
    default_route_mode = models.CharField(max_length=16, choices=RouteMode.choices, default=RouteMode.BALANCED)
    allowed_providers = models.JSONField(default=list, blank=True)
    blocked_providers = models.JSONField(default=list, blank=True)
    # Tenant-wide limits (null = unlimited).
    rpm_limit = models.PositiveIntegerField(null=True, blank=True)
    tpm_limit = models.PositiveIntegerField(null=True, blank=True)
    max_concurrency = models.PositiveIntegerField(null=True, blank=True)
    # Billing.
    billing_mode = models.CharField(max_length=16, choices=BillingMode.choices, default=BillingMode.PREPAID)
    credit_limit_micros = models.BigIntegerField(default=0)  # postpaid only
    markup_bps = models.PositiveIntegerField(default=0)  # basis points over provider cost
    monthly_spend_limit_micros = models.BigIntegerField(null=True, blank=True)
    # An unknown version of a known model family is served by the family's newest model instead of a 404
    # (docs/gateway.md, "Model names"); a key may override it. Off: the model asked for, or a clear 404.
    model_family_fallback = models.BooleanField(default=False)
    stripe_customer_id = models.CharField(max_length=64, blank=True)
    # The customer's default payment method for Stripe's postpaid invoices (pm_…); postpaid needs one.
    stripe_payment_method_id = models.CharField(max_length=64, blank=True)

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "user"], name="uniq_membership")]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.tenant_id}:{self.role}"


class Invitation(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Role.choices)
    token_hash = models.CharField(max_length=64, unique=True)  # sha256 of the single-use token
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # One pending invitation per address and tenant: inviting again re-issues it (tenants.invitations).
            models.UniqueConstraint(
                fields=["tenant", "email"],
                condition=models.Q(accepted_at__isnull=True, revoked_at__isnull=True),
                name="uniq_pending_invitation",
            )
        ]

    def __str__(self) -> str:
        return f"invite {self.email} -> {self.tenant_id}"
