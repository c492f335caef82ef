from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from credentials.models import ProviderCredential


@admin.register(ProviderCredential)
class ProviderCredentialAdmin(admin.ModelAdmin):
    list_display = ("tenant", "provider", "last_four", "base_url", "created_at", "rotated_at")
    exclude = ("secret_token",)
    readonly_fields = ("tenant", "provider", "last_four", "base_url", "created_at", "rotated_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
