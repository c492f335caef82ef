"""Input serializers of the public leaderboard API (query parameters)."""

from __future__ import annotations

from rest_framework import serializers

from evaluation import conf
from evaluation.models import ALL_REGIONS
from evaluation.selectors import DEFAULT_SORT, METRICS, SORT_KEYS
from evaluation.services.aggregate import WINDOWS

MAX_BIGINT = 2**63 - 1  # PostgreSQL bigint: a larger id would fail in the driver instead of matching nothing
SORT_CHOICES = [*SORT_KEYS, *(f"-{key}" for key in SORT_KEYS)]


def _region(value: str) -> None:
    if value != ALL_REGIONS and value not in conf.regions():
        raise serializers.ValidationError(
            f"unknown region {value!r}; one of: all, {', '.join(conf.regions())}", code="invalid_choice"
        )


class LeaderboardQuery(serializers.Serializer[dict[str, object]]):
    window = serializers.ChoiceField(choices=list(WINDOWS), default="1h")
    region = serializers.CharField(default=ALL_REGIONS, validators=[_region])
    model = serializers.CharField(required=False, max_length=100)
    provider = serializers.CharField(required=False, max_length=63)
    sort = serializers.ChoiceField(choices=SORT_CHOICES, default=DEFAULT_SORT)


class SeriesQuery(serializers.Serializer[dict[str, object]]):
    offering = serializers.IntegerField(min_value=1, max_value=MAX_BIGINT)
    metric = serializers.ChoiceField(choices=list(METRICS), default="ttft_p50")
    window = serializers.ChoiceField(choices=list(WINDOWS), default="24h")
    region = serializers.CharField(default=ALL_REGIONS, validators=[_region])
