"""Public leaderboard API (no auth): /api/v1/leaderboard, /trends, /series, /incidents.

Views parse and validate the query (unknown parameter names are 400s too), then build the body
from ``evaluation.selectors`` (``leaderboard``, ``trends``, ``incidents``); bodies are cached per stats version (``cache.cached_json``).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from evaluation.api.cache import cached_json
from evaluation.api.serializers import IncidentsQuery, LeaderboardQuery, SeriesQuery, TrendsQuery
from evaluation.definitions import DEFINITIONS
from evaluation.offerings_to_probe import current_catalog
from evaluation.selectors.incidents import incidents_list
from evaluation.selectors.leaderboard import MIN_N, leaderboard_rows, leaderboard_window
from evaluation.selectors.trends import SERIES_BUCKET, offering_series, offering_trends
from foundation.api_errors import ApiError


class LeaderboardOut(serializers.Serializer[Any]):  # the documented shape; rows are LeaderboardRow.as_json()
    window = serializers.CharField()
    region = serializers.CharField()
    sort = serializers.CharField()
    count = serializers.IntegerField()
    window_start = serializers.CharField(allow_null=True)
    window_end = serializers.CharField(allow_null=True)
    min_n = serializers.DictField(child=serializers.IntegerField())
    definitions = serializers.DictField(child=serializers.CharField())  # metric -> what it means
    results = serializers.ListField(child=serializers.DictField())


class SeriesOut(serializers.Serializer[Any]):
    offering = serializers.IntegerField()
    metric = serializers.CharField()
    window = serializers.CharField()
    region = serializers.CharField()
    points = serializers.ListField(child=serializers.DictField())


class TrendsOut(serializers.Serializer[Any]):
    metric = serializers.CharField()
    window = serializers.CharField()
    region = serializers.CharField()
    bucket_s = serializers.IntegerField()
    series = serializers.ListField(child=serializers.DictField())


class IncidentsOut(serializers.Serializer[Any]):
    count = serializers.IntegerField()
    results = serializers.ListField(child=serializers.DictField())


def _json(body: bytes) -> HttpResponse:
    return HttpResponse(body, content_type="application/json")


def _query(serializer: type[serializers.Serializer[Any]], request: Request) -> dict[str, Any]:
    query = serializer(data=request.query_params)
    unknown = sorted(set(request.query_params) - set(query.fields))
    if unknown:
        raise ApiError(
            "unknown_parameter",
            f"unknown parameter {unknown[0]!r}; one of: {', '.join(query.fields)}",
            param=unknown[0],
        )
    query.is_valid(raise_exception=True)
    return dict(query.validated_data)


def _offerings(params: dict[str, Any]) -> list[Any]:
    """Catalog offerings matching the model / provider / offering filters."""
    return [
        o
        for o in current_catalog().offerings
        if params.get("model") in (None, o.model)
        and params.get("provider") in (None, o.provider)
        and params.get("offering") in (None, o.offering_id)
    ]


class _Public(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]


class LeaderboardView(_Public):
    @extend_schema(operation_id="leaderboard", parameters=[LeaderboardQuery], responses=LeaderboardOut)
    def get(self, request: Request) -> HttpResponse:
        params = _query(LeaderboardQuery, request)

        def build() -> dict[str, Any]:
            rows = leaderboard_rows(**params)
            start, end = leaderboard_window(params["window"])
            return {
                "window": params["window"],
                "region": params["region"],
                "sort": params["sort"],
                "count": len(rows),
                "window_start": start,
                "window_end": end,
                "min_n": MIN_N,
                "definitions": DEFINITIONS,
                "results": [row.as_json() for row in rows],
            }

        return _json(cached_json("leaderboard", params, build))


class LeaderboardSeriesView(_Public):
    @extend_schema(operation_id="leaderboard_series", parameters=[SeriesQuery], responses=SeriesOut)
    def get(self, request: Request) -> HttpResponse:
        params = _query(SeriesQuery, request)

        def build() -> dict[str, Any]:
            points = offering_series(
                offering_id=params["offering"],
                metric=params["metric"],
                window=params["window"],
                region=params["region"],
            )
            return {**params, "points": [point.as_json() for point in points]}

        return _json(cached_json("series", params, build))


class LeaderboardTrendsView(_Public):
    @extend_schema(operation_id="leaderboard_trends", parameters=[TrendsQuery], responses=TrendsOut)
    def get(self, request: Request) -> HttpResponse:
        params = _query(TrendsQuery, request)

        def build() -> dict[str, Any]:
            offerings = _offerings(params)
            series = offering_trends(
                metric=params["metric"],
                window=params["window"],
                region=params["region"],
                offering_ids=[o.offering_id for o in offerings],
            )
            start, end = leaderboard_window(params["window"])
            return {
                "metric": params["metric"],
                "window": params["window"],
                "region": params["region"],
                "bucket_s": int(SERIES_BUCKET[params["window"]].total_seconds()),
                "window_start": start,
                "window_end": end,
                "series": [
                    {"offering_id": o.offering_id, "model": o.model, "provider": o.provider,
                     "points": [point.as_json() for point in series[o.offering_id]]}
                    for o in sorted(offerings, key=lambda o: (o.model, o.provider, o.offering_id))
                    if series[o.offering_id]
                ],
            }  # fmt: skip

        return _json(cached_json("trends", params, build))


class LeaderboardIncidentsView(_Public):
    @extend_schema(operation_id="leaderboard_incidents", parameters=[IncidentsQuery], responses=IncidentsOut)
    def get(self, request: Request) -> HttpResponse:
        params = _query(IncidentsQuery, request)

        def build() -> dict[str, Any]:
            offerings = {o.offering_id: o for o in _offerings(params)}
            rows = incidents_list(state=params["state"], offering_ids=list(offerings), region=params["region"])
            results = [
                {
                    **row.as_json(),
                    "model": offerings[row.offering_id].model,
                    "provider": offerings[row.offering_id].provider,
                }
                for row in rows
            ]
            return {"count": len(results), "results": results}

        return _json(cached_json("incidents", params, build))
