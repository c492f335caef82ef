from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from catalog.models import Model, Offering, OfferingPrice, Provider


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "dialect", "base_url", "region")
    search_fields = ("slug", "name")


@admin.register(Model)
class ModelAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "author", "context_window", "max_output", "quality")
    search_fields = ("slug", "name")


class PriceInline(admin.TabularInline):
    model = OfferingPrice
    extra = 0
    can_delete = False
    readonly_fields = ("version", "input", "output", "cache_read", "cache_write_5m", "cache_write_1h", "reasoning",
                       "effective_from")  # fmt: skip

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # prices change only through load_catalog (a new version, never a rewrite)


@admin.register(Offering)
class OfferingAdmin(admin.ModelAdmin):
    list_display = ("model", "provider", "upstream_model", "status")
    list_filter = ("status", "provider")
    inlines = [PriceInline]
