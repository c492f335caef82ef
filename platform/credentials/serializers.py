"""Serializers of the BYOK credentials API. The secret is write-only; only its last 4 come back."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.api_base import StrictSerializer


class CredentialCreateIn(StrictSerializer):
    provider = serializers.SlugField(max_length=63, help_text="provider slug from the catalog")
    secret = serializers.CharField(min_length=8, max_length=4096, write_only=True, trim_whitespace=True)
    base_url = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)


class CredentialUpdateIn(StrictSerializer):
    secret = serializers.CharField(min_length=8, max_length=4096, write_only=True, required=False)
    base_url = serializers.CharField(max_length=500, required=False, allow_blank=True)


class CredentialOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    provider = serializers.CharField(source="provider.slug")
    last_four = serializers.CharField()
    base_url = serializers.CharField()
    created_at = serializers.DateTimeField()
    rotated_at = serializers.DateTimeField(allow_null=True)
