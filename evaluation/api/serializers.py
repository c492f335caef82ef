"""Input serializers of the public leaderboard API (query parameters): unknown names or values are 400s."""

from __future__ import annotations

from rest_framework import serializers

from evaluation import conf
from evaluation.models import ALL_REGIONS
from evaluation.offerings_to_probe import current_catalog
from evaluation.selectors.leaderboard import DEFAULT_SORT, METRICS, SORT_KEYS
from evaluation.services.aggregate import WINDOWS

MAX_BIGINT = 2**63 - 1  # PostgreSQL bigint: a larger id would fail in the driver instead of matching nothing
SORT_CHOICES = [*SORT_KEYS, *(f"-{key}" for key in SORT_KEYS)]
INCIDENT_STATES = ("open", "all")


def _region(value: str) -> None:
    if value != ALL_REGIONS and value not in conf.regions():
        raise serializers.ValidationError(
            f"unknown region {value!r}; one of: all, {', '.join(conf.regions())}", code="invalid_choice"
        )


def _model(value: str) -> None:
    if value not in {o.model for o in current_catalog().offerings}:
        raise serializers.ValidationError(f"unknown model {value!r}", code="invalid_choice")


def _provider(value: str) -> None:
    if value not in {o.provider for o in current_catalog().offerings}:
        raise serializers.ValidationError(f"unknown provider {value!r}", code="invalid_choice")


def _offering(value: int) -> None:
    if value not in {o.offering_id for o in current_catalog().offerings}:
        raise serializers.ValidationError(f"unknown offering {value}", code="invalid_choice")


class _Filters(serializers.Serializer[dict[str, object]]):
    region = serializers.CharField(default=ALL_REGIONS, validators=[_region])
    model = serializers.CharField(required=False, max_length=100, validators=[_model])
    provider = serializers.CharField(required=False, max_length=63, validators=[_provider])


class LeaderboardQuery(_Filters):
    window = serializers.ChoiceField(choices=list(WINDOWS), default="1h")
    sort = serializers.ChoiceField(choices=SORT_CHOICES, default=DEFAULT_SORT)


class SeriesQuery(serializers.Serializer[dict[str, object]]):
    offering = serializers.IntegerField(min_value=1, max_value=MAX_BIGINT, validators=[_offering])
    metric = serializers.ChoiceField(choices=list(METRICS), default="ttft_p50")
    window = serializers.ChoiceField(choices=list(WINDOWS), default="24h")
    region = serializers.CharField(default=ALL_REGIONS, validators=[_region])


class TrendsQuery(_Filters):
    metric = serializers.ChoiceField(choices=list(METRICS), default="ttft_p50")
    window = serializers.ChoiceField(choices=list(WINDOWS), default="24h")
    offering = serializers.IntegerField(required=False, min_value=1, max_value=MAX_BIGINT, validators=[_offering])


class IncidentsQuery(_Filters):
    state = serializers.ChoiceField(choices=list(INCIDENT_STATES), default="open")
    offering = serializers.IntegerField(required=False, min_value=1, max_value=MAX_BIGINT, validators=[_offering])
