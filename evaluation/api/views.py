"""Public leaderboard API: GET /api/v1/leaderboard and /api/v1/leaderboard/series (no auth)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from evaluation import selectors
from evaluation.api.cache import cached_json
from evaluation.api.serializers import LeaderboardQuery, SeriesQuery


class LeaderboardOut(serializers.Serializer[Any]):  # the documented shape; rows are selector dicts
    window = serializers.CharField()
    region = serializers.CharField()
    sort = serializers.CharField()
    count = serializers.IntegerField()
    results = serializers.ListField(child=serializers.DictField())


class SeriesOut(serializers.Serializer[Any]):
    offering = serializers.IntegerField()
    metric = serializers.CharField()
    window = serializers.CharField()
    region = serializers.CharField()
    points = serializers.ListField(child=serializers.DictField())


def _json(body: bytes) -> HttpResponse:
    return HttpResponse(body, content_type="application/json")


class LeaderboardView(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    @extend_schema(operation_id="leaderboard", parameters=[LeaderboardQuery], responses=LeaderboardOut)
    def get(self, request: Request) -> HttpResponse:
        query = LeaderboardQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = dict(query.validated_data)

        def build() -> dict[str, Any]:
            rows = selectors.leaderboard_rows(**params)
            return {
                "window": params["window"],
                "region": params["region"],
                "sort": params["sort"],
                "count": len(rows),
                "results": rows,
            }

        return _json(cached_json("leaderboard", params, build))


class LeaderboardSeriesView(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    @extend_schema(operation_id="leaderboard_series", parameters=[SeriesQuery], responses=SeriesOut)
    def get(self, request: Request) -> HttpResponse:
        query = SeriesQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = dict(query.validated_data)

        def build() -> dict[str, Any]:
            points = selectors.offering_series(
                offering_id=params["offering"],
                metric=params["metric"],
                window=params["window"],
                region=params["region"],
            )
            return {**params, "points": points}

        return _json(cached_json("series", params, build))
