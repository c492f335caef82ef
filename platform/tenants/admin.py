from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from outbox.models import Topic
from outbox.services import outbox_add
from tenants.models import Invitation, Membership, Tenant


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "billing_mode", "markup_bps", "created_at")
    search_fields = ("slug", "name")
    # Money is changed through metering's services (ledger), never typed in here.
    readonly_fields = ("credit_limit_micros", "monthly_spend_limit_micros", "stripe_customer_id", "created_at")
    inlines = [MembershipInline]

    def save_model(self, request: HttpRequest, obj: Tenant, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)  # inside the admin's transaction
        outbox_add(topic=Topic.TENANT_KEYS, tenant_id=obj.pk)


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ("email", "tenant", "role", "created_at", "expires_at", "accepted_at", "revoked_at")
    exclude = ("token_hash",)
    readonly_fields = ("tenant", "email", "role", "invited_by", "created_at", "expires_at", "accepted_at")
