from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from apikeys.models import ApiKey
from apikeys.services import api_key_revoke


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("name", "tenant", "prefix", "last_four", "created_at", "expires_at", "revoked_at")
    list_filter = ("live",)
    search_fields = ("name", "tenant__slug", "prefix")
    exclude = ("key_hash",)  # the hash is as sensitive as a password hash
    readonly_fields = ("tenant", "created_by", "prefix", "last_four", "live", "created_at", "last_used_at",
                       "revoked_at", "rotated_from")  # fmt: skip
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # keys are issued through the console, API or create_api_key (shown once)

    @admin.action(description="Revoke selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset:
            api_key_revoke(key=api_key)
