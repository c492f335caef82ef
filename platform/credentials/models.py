"""BYOK provider credentials: the tenant's own provider API key, encrypted at rest."""

from __future__ import annotations

from django.db import models

from catalog.models import Provider
from tenants.models import Tenant


class ProviderCredential(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="provider_credentials")
    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="+")
    # Fernet token (MultiFernet over settings.CREDENTIAL_KEYS). Never rendered anywhere.
    secret_token = models.TextField()
    last_four = models.CharField(max_length=4)
    base_url = models.CharField(max_length=500, blank=True)  # blank = the provider's
    created_at = models.DateTimeField(auto_now_add=True)
    rotated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "provider"], name="uniq_tenant_provider_credential")]

    def __str__(self) -> str:
        return f"{self.provider_id} credential …{self.last_four}"

    def __repr__(self) -> str:
        return f"<ProviderCredential {self.pk} tenant={self.tenant_id} provider={self.provider_id}>"
