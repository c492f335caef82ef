"""Output serializers of the public catalog API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from catalog.models import Offering
from catalog.selectors import current_price


class ProviderOut(serializers.Serializer[Any]):
    slug = serializers.CharField()
    name = serializers.CharField()
    website = serializers.CharField()
    dialect = serializers.CharField()
    region = serializers.CharField()


class ModelOut(serializers.Serializer[Any]):
    slug = serializers.CharField()
    name = serializers.CharField()
    author = serializers.CharField()
    context_window = serializers.IntegerField()
    max_output = serializers.IntegerField()


class PriceOut(serializers.Serializer[Any]):
    version = serializers.IntegerField()
    input = serializers.IntegerField(help_text="micro-USD per 1M tokens")
    output = serializers.IntegerField()
    cache_read = serializers.IntegerField()
    cache_write_5m = serializers.IntegerField()
    cache_write_1h = serializers.IntegerField()
    reasoning = serializers.IntegerField(allow_null=True)
    effective_from = serializers.DateTimeField()


class OfferingOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    model = serializers.CharField(source="model.slug")
    provider = serializers.CharField(source="provider.slug")
    context_window = serializers.IntegerField()
    max_output = serializers.IntegerField()
    parameters = serializers.ListField(child=serializers.CharField())
    rpm = serializers.IntegerField(allow_null=True)
    tpm = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    price = serializers.SerializerMethodField()

    def get_price(self, offering: Offering) -> dict[str, Any] | None:
        price = current_price(offering)
        return None if price is None else dict(PriceOut(price).data)
