"""Public, read-only catalog API: providers, models, offerings with current prices."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog import serializers as s
from catalog.selectors import models_list, offerings_with_current_price, providers_list


class PublicView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[type] = []


class ProviderListView(PublicView):
    @extend_schema(responses=s.ProviderOut(many=True), operation_id="catalog_providers")
    def get(self, request: Request) -> Response:
        return Response(s.ProviderOut(providers_list(), many=True).data)


class ModelListView(PublicView):
    @extend_schema(responses=s.ModelOut(many=True), operation_id="catalog_models")
    def get(self, request: Request) -> Response:
        return Response(s.ModelOut(models_list(), many=True).data)


class OfferingListView(PublicView):
    @extend_schema(
        responses=s.OfferingOut(many=True),
        operation_id="catalog_offerings",
        parameters=[OpenApiParameter("model", str, description="only offerings of this model slug")],
    )
    def get(self, request: Request) -> Response:
        offerings = offerings_with_current_price()
        model = request.query_params.get("model")
        if model and "\x00" not in model:
            offerings = offerings.filter(model__slug=model)
        return Response(s.OfferingOut(offerings, many=True).data)
