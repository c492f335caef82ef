"""Input and output serializers of the tenants API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.api_base import StrictSerializer
from tenants.models import BillingMode, Role, RouteMode

MAX_INT = 2_147_483_647
MAX_BIG = 9_223_372_036_854_775_807


class TenantCreateIn(StrictSerializer):
    slug = serializers.SlugField(max_length=63)
    name = serializers.CharField(max_length=200)


class TenantUpdateIn(StrictSerializer):
    name = serializers.CharField(max_length=200, required=False)
    default_route_mode = serializers.ChoiceField(choices=RouteMode.choices, required=False)
    allowed_providers = serializers.ListField(
        child=serializers.SlugField(max_length=63), max_length=100, required=False
    )
    blocked_providers = serializers.ListField(
        child=serializers.SlugField(max_length=63), max_length=100, required=False
    )
    rpm_limit = serializers.IntegerField(min_value=1, max_value=MAX_INT, allow_null=True, required=False)
    tpm_limit = serializers.IntegerField(min_value=1, max_value=MAX_INT, allow_null=True, required=False)
    max_concurrency = serializers.IntegerField(min_value=1, max_value=MAX_INT, allow_null=True, required=False)
    billing_mode = serializers.ChoiceField(choices=BillingMode.choices, required=False)
    monthly_spend_limit_micros = serializers.IntegerField(
        min_value=0, max_value=MAX_BIG, allow_null=True, required=False
    )
    model_family_fallback = serializers.BooleanField(
        required=False, help_text="serve an unknown version of a known model family by its newest model"
    )


BILLING_FIELDS = frozenset({"billing_mode", "monthly_spend_limit_micros"})


TENANT_FIELDS = (
    "slug",
    "name",
    "created_at",
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
)


class TenantOut(serializers.Serializer[Any]):
    slug = serializers.CharField()
    name = serializers.CharField()
    role = serializers.CharField(help_text="the caller's role")
    created_at = serializers.DateTimeField()
    default_route_mode = serializers.CharField()
    allowed_providers = serializers.ListField(child=serializers.CharField())
    blocked_providers = serializers.ListField(child=serializers.CharField())
    rpm_limit = serializers.IntegerField(allow_null=True)
    tpm_limit = serializers.IntegerField(allow_null=True)
    max_concurrency = serializers.IntegerField(allow_null=True)
    billing_mode = serializers.CharField()
    markup_bps = serializers.IntegerField(help_text="set by operators")
    monthly_spend_limit_micros = serializers.IntegerField(allow_null=True)
    model_family_fallback = serializers.BooleanField()


class MemberOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    email = serializers.EmailField(source="user.email")
    name = serializers.CharField(source="user.name")
    role = serializers.CharField()
    created_at = serializers.DateTimeField()


class MemberUpdateIn(StrictSerializer):
    role = serializers.ChoiceField(choices=Role.choices)


class InvitationCreateIn(StrictSerializer):
    email = serializers.EmailField(max_length=254)
    role = serializers.ChoiceField(choices=Role.choices)


class InvitationOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    email = serializers.EmailField()
    role = serializers.CharField()
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    accepted_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)


class InvitationCreatedOut(InvitationOut):
    token = serializers.CharField(help_text="shown once; the emailed link carries it")
    url = serializers.URLField(help_text="the acceptance link emailed to the invitee")
    resent = serializers.BooleanField(help_text="true when a pending invitation was re-issued (200), not created (201)")
    email_sent = serializers.BooleanField(help_text="false when the mail server failed; the link still works")


class InvitationAcceptIn(StrictSerializer):
    token = serializers.CharField(max_length=200)
