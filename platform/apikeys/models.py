"""API keys: stored only as HMAC-SHA256(pepper, key); shown once at creation."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from tenants.models import Tenant


class ApiKey(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16)  # e.g. "tw_live_AbCd"
    last_four = models.CharField(max_length=4)
    live = models.BooleanField(default=True)
    # Scopes: null = any.
    allowed_models = models.JSONField(null=True, blank=True)
    allowed_route_modes = models.JSONField(null=True, blank=True)
    usage_read = models.BooleanField(default=True)
    default_route_mode = models.CharField(max_length=16, blank=True)
    model_family_fallback = models.BooleanField(null=True, blank=True)  # None: the tenant's setting
    # Limits: null = unlimited (tenant limits still apply).
    rpm_limit = models.PositiveIntegerField(null=True, blank=True)
    tpm_limit = models.PositiveIntegerField(null=True, blank=True)
    max_concurrency = models.PositiveIntegerField(null=True, blank=True)
    monthly_budget_micros = models.BigIntegerField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    rotated_from = models.OneToOneField(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="rotated_to"
    )

    class Meta:
        indexes = [models.Index(fields=["tenant", "created_at"])]

    def __str__(self) -> str:
        return f"{self.prefix}…{self.last_four} ({self.name})"
