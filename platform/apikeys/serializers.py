"""Input and output serializers of the API keys API. The plaintext appears only in KeyCreatedOut."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.api_base import StrictSerializer
from tenants.models import RouteMode

MAX_INT = 2_147_483_647
MAX_BIG = 9_223_372_036_854_775_807


def _limit() -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=MAX_INT, allow_null=True, required=False)


class KeyLimitsIn(StrictSerializer):
    name = serializers.CharField(max_length=100, required=False)
    default_route_mode = serializers.ChoiceField(choices=[("", "tenant default"), *RouteMode.choices], required=False)
    model_family_fallback = serializers.BooleanField(
        allow_null=True, required=False, help_text="null: the organisation's setting (docs/gateway.md, Model names)"
    )
    rpm_limit = _limit()
    tpm_limit = _limit()
    max_concurrency = _limit()
    monthly_budget_micros = serializers.IntegerField(min_value=0, max_value=MAX_BIG, allow_null=True, required=False)
    expires_at = serializers.DateTimeField(allow_null=True, required=False)


class KeyCreateIn(KeyLimitsIn):
    name = serializers.CharField(max_length=100)
    live = serializers.BooleanField(default=True)
    allowed_models = serializers.ListField(
        child=serializers.CharField(max_length=100), max_length=200, allow_null=True, required=False, default=None
    )
    allowed_route_modes = serializers.ListField(
        child=serializers.ChoiceField(choices=RouteMode.choices), allow_null=True, required=False, default=None
    )
    usage_read = serializers.BooleanField(allow_null=True, required=False, default=None)


class KeyRotateIn(StrictSerializer):
    grace_seconds = serializers.IntegerField(
        min_value=0, max_value=30 * 24 * 3600, default=3600, help_text="how long the old key keeps working"
    )


class KeyOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    last_four = serializers.CharField()
    live = serializers.BooleanField()
    allowed_models = serializers.ListField(child=serializers.CharField(), allow_null=True)
    allowed_route_modes = serializers.ListField(child=serializers.CharField(), allow_null=True)
    usage_read = serializers.BooleanField()
    default_route_mode = serializers.CharField()
    model_family_fallback = serializers.BooleanField(allow_null=True)
    rpm_limit = serializers.IntegerField(allow_null=True)
    tpm_limit = serializers.IntegerField(allow_null=True)
    max_concurrency = serializers.IntegerField(allow_null=True)
    monthly_budget_micros = serializers.IntegerField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    created_by = serializers.EmailField(source="created_by.email", allow_null=True, default=None)
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    rotated_from = serializers.IntegerField(source="rotated_from_id", allow_null=True)


class KeyCreatedOut(KeyOut):
    key = serializers.CharField(help_text="the API key; shown once, never again")
