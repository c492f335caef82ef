"""Output shapes of the metering API, for the OpenAPI schema only (the views render selector dicts)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

_Out = serializers.Serializer[Any]


class GenerationOut(_Out):
    id = serializers.CharField()
    ingested = serializers.BooleanField()
    key_id = serializers.IntegerField(allow_null=True)
    model = serializers.CharField(allow_null=True)
    requested_model = serializers.CharField(allow_null=True, help_text="the name the caller sent")
    model_resolution = serializers.CharField(
        help_text="slug (the model asked for), alias (another name of it), family (another version of its "
        "family: the key or organisation opted in to family fallback) or auto (the router picked it)"
    )
    provider = serializers.CharField(allow_null=True)
    offering_id = serializers.IntegerField(allow_null=True)
    tokens = serializers.DictField(child=serializers.IntegerField())
    charge_micros = serializers.IntegerField(help_text="what the tenant pays; provider cost is not shown")
    cache = serializers.DictField()
    timings = serializers.DictField()
    status = serializers.CharField(allow_null=True, help_text="ok, upstream_error, client_cancelled, failed, rejected")
    http_status = serializers.IntegerField(allow_null=True, help_text="what the caller got")
    error_code = serializers.CharField(allow_blank=True, help_text="the stable error code the caller saw; '' when ok")
    end_state = serializers.CharField(
        allow_blank=True,
        help_text="how the call ended (completed, client_cancelled, upstream_cut, upstream_timeout, ...); "
        "decides what was charged (docs/billing.md)",
    )
    finish_reason = serializers.CharField(allow_blank=True, help_text="the provider's finish reason; '' if none came")
    upstream_id = serializers.CharField(allow_blank=True, help_text="the provider's response id")


class CurrentKeyLimitsOut(_Out):
    rpm = serializers.IntegerField(allow_null=True)
    tpm = serializers.IntegerField(allow_null=True)
    max_concurrency = serializers.IntegerField(allow_null=True)
    monthly_budget_micros = serializers.IntegerField(allow_null=True)


class CurrentKeyOut(_Out):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    limits = CurrentKeyLimitsOut()
    spend_this_month_micros = serializers.IntegerField()
    held_micros = serializers.IntegerField(help_text="open holds of this key's calls in flight (may still be charged)")
    budget_remaining_micros = serializers.IntegerField(
        allow_null=True, help_text="monthly budget - settled spend - open holds; null without a budget"
    )


class CurrentKeyTenantOut(_Out):
    slug = serializers.CharField()
    billing_mode = serializers.CharField()
    balance_micros = serializers.IntegerField()
    credit_limit_micros = serializers.IntegerField(allow_null=True)
    spendable_micros = serializers.IntegerField()
    spend_this_month_micros = serializers.IntegerField()
    monthly_spend_limit_micros = serializers.IntegerField(allow_null=True)
    held_micros = serializers.IntegerField(help_text="open holds of every key's calls in flight")
    spend_limit_remaining_micros = serializers.IntegerField(
        allow_null=True, help_text="monthly spend limit - settled spend - open holds; null without a limit"
    )


class CurrentKeySummaryOut(_Out):
    key = CurrentKeyOut()
    tenant = CurrentKeyTenantOut()


# Inline: a declared field named "data" would shadow Serializer.data.
UsageOut = inline_serializer(
    "UsageOut", {"group": serializers.CharField(), "data": serializers.ListField(child=serializers.DictField())}
)


GenerationsOut = inline_serializer(
    "GenerationsOut",
    {
        "data": GenerationOut(many=True),
        "next_cursor": serializers.CharField(allow_null=True, help_text="pass as cursor for the next page"),
        "has_more": serializers.BooleanField(),
    },
)


class WebhookOut(_Out):
    received = serializers.BooleanField()
    outcome = serializers.ChoiceField(choices=["applied", "duplicate", "ignored"])
