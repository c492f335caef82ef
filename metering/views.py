"""Thin HTTP views: per-request record, current key, usage export, Stripe webhook."""

from __future__ import annotations

import csv
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apikeys.authentication import ApiKeyAuthentication
from apikeys.models import ApiKey
from apikeys.selectors import tenant_keys
from contracts.usage import USAGE_STATUSES
from foundation.api_errors import ApiError
from metering import selectors
from metering.api_docs import CurrentKeySummaryOut, GenerationOut, GenerationsOut, UsageOut, WebhookOut
from metering.cursors import MAX_CURSOR_CHARS, BadCursor, cursor_decode
from metering.stripe.customers import PostpaidRefused, postpaid_enable
from metering.stripe.webhooks import WebhookRefused, stripe_event_apply, webhook_verify
from tenants.api_base import StrictSerializer, TenantScopedView
from tenants.permissions import Action

MAX_EXPORT_DAYS = 366  # one year per export keeps the query on the (tenant, time) index and the file small
DEFAULT_PAGE = 20  # generations per page: a screenful
MAX_PAGE = 100  # bounded so one page stays one short index range scan
MAX_BIG = 9_223_372_036_854_775_807


class ApiKeyView(APIView):
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [IsAuthenticated]


class GenerationIn(serializers.Serializer[Any]):
    id = serializers.CharField(max_length=64)


class GenerationView(ApiKeyView):
    @extend_schema(
        parameters=[OpenApiParameter("id", str, required=True)], operation_id="generation_get", responses=GenerationOut
    )
    def get(self, request: Request) -> Response:
        data = GenerationIn(data=request.query_params)
        data.is_valid(raise_exception=True)
        api_key: ApiKey = request.auth  # type: ignore[assignment]
        record = selectors.generation_get(tenant_id=api_key.tenant_id, request_id=data.validated_data["id"])
        if record is None:  # unknown or another tenant's: the same answer
            raise ApiError("not_found", "no such generation", param="id", status_code=404)
        return Response(record)


class GenerationsIn(StrictSerializer):
    limit = serializers.IntegerField(min_value=1, max_value=MAX_PAGE, default=DEFAULT_PAGE)
    cursor = serializers.CharField(
        required=False, max_length=MAX_CURSOR_CHARS, help_text="next_cursor of the last page"
    )
    model = serializers.CharField(required=False, max_length=100)
    provider = serializers.CharField(required=False, max_length=63)
    status = serializers.ChoiceField(choices=USAGE_STATUSES, required=False)
    since = serializers.DateTimeField(required=False, help_text="finished at or after")
    until = serializers.DateTimeField(required=False, help_text="finished before")

    def validate_cursor(self, value: str) -> str:
        try:
            cursor_decode(value)
        except BadCursor:
            raise serializers.ValidationError("not a cursor this API returned", code="invalid_cursor") from None
        return value


class TenantGenerationsIn(GenerationsIn):
    key = serializers.IntegerField(required=False, min_value=1, max_value=MAX_BIG, help_text="an API key id")


def _generations_page(validated: dict[str, Any], *, tenant_id: int, key_id: int | None) -> Response:
    data = dict(validated)
    limit, cursor = data.pop("limit"), data.pop("cursor", None)
    data.pop("key", None)
    where = selectors.GenerationFilter(key_id=key_id, **data)
    page = selectors.generations_list(tenant_id=tenant_id, where=where, cursor=cursor, limit=limit)
    return Response({"data": page.data, "next_cursor": page.next_cursor, "has_more": page.has_more})


class GenerationsView(ApiKeyView):
    """The calling key's own requests, newest first."""

    @extend_schema(parameters=[GenerationsIn], operation_id="generations_list", responses=GenerationsOut)
    def get(self, request: Request) -> Response:
        data = GenerationsIn(data=request.query_params)
        data.is_valid(raise_exception=True)
        api_key: ApiKey = request.auth  # type: ignore[assignment]
        return _generations_page(data.validated_data, tenant_id=api_key.tenant_id, key_id=api_key.pk)


class TenantGenerationsView(TenantScopedView):
    """The organisation's requests (members with usage rights), filterable by key."""

    @extend_schema(parameters=[TenantGenerationsIn], operation_id="tenant_generations_list", responses=GenerationsOut)
    def get(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.USAGE_VIEW)
        data = TenantGenerationsIn(data=request.query_params)
        data.is_valid(raise_exception=True)
        key_id = data.validated_data.get("key")
        if key_id is not None and not tenant_keys(membership=self.membership).filter(pk=key_id).exists():
            raise ApiError("unknown_key", f"no API key {key_id} in this organisation", param="key")
        return _generations_page(data.validated_data, tenant_id=self.membership.tenant_id, key_id=key_id)


class KeyView(ApiKeyView):
    @extend_schema(operation_id="current_key_get", responses=CurrentKeySummaryOut)
    def get(self, request: Request) -> Response:
        return Response(selectors.key_summary(api_key=request.auth))


EARLIEST_USAGE_DATE = date(2000, 1, 1)  # before any usage could exist; keeps date arithmetic in range
LATEST_USAGE_DATE = date(9000, 1, 1)


class UsageIn(serializers.Serializer[Any]):
    start = serializers.DateField(required=False)
    end = serializers.DateField(required=False)

    def validate_start(self, value: date) -> date:
        return _usage_date(value)

    def validate_end(self, value: date) -> date:
        return _usage_date(value)

    group = serializers.ChoiceField(choices=sorted(selectors.USAGE_GROUPS), default="day")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        today = datetime.now(tz=UTC).date()
        end = attrs.get("end") or today + timedelta(days=1)
        start = attrs.get("start") or end - timedelta(days=30)
        if start >= end or (end - start).days > MAX_EXPORT_DAYS:
            raise serializers.ValidationError({"start": f"start must be before end, at most {MAX_EXPORT_DAYS} days"})
        attrs["start"] = datetime(start.year, start.month, start.day, tzinfo=UTC)
        attrs["end"] = datetime(end.year, end.month, end.day, tzinfo=UTC)
        return attrs


def _usage_date(value: date) -> date:
    if not EARLIEST_USAGE_DATE <= value <= LATEST_USAGE_DATE:
        raise serializers.ValidationError(f"must be between {EARLIEST_USAGE_DATE} and {LATEST_USAGE_DATE}")
    return value


class TenantUsageView(TenantScopedView):
    @extend_schema(parameters=[UsageIn], operation_id="tenant_usage", responses=UsageOut)
    def get(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.USAGE_VIEW)
        data = UsageIn(data=request.query_params)
        data.is_valid(raise_exception=True)
        rows = selectors.tenant_usage(tenant_id=self.membership.tenant_id, **data.validated_data)
        return Response({"group": data.validated_data["group"], "data": rows})


class TenantUsageCsvView(TenantScopedView):
    @extend_schema(parameters=[UsageIn], operation_id="tenant_usage_csv", responses={(200, "text/csv"): str})
    def get(self, request: Request, tenant_slug: str) -> HttpResponse:
        self.require(Action.USAGE_VIEW)
        data = UsageIn(data=request.query_params)
        data.is_valid(raise_exception=True)
        group = data.validated_data["group"]
        rows = selectors.tenant_usage(tenant_id=self.membership.tenant_id, **data.validated_data)
        response = HttpResponse(content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="usage-{tenant_slug}-{group}.csv"'
        columns = [
            group,
            "requests",
            "input_tokens",
            "cache_read_tokens",
            "output_tokens",
            "charge_micros",
        ]
        writer = csv.DictWriter(response, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        return response


class StripeWebhookView(APIView):
    """Outside tenant auth: the signature over the raw body is the authentication."""

    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="stripe_webhook",
        request={"application/json": OpenApiTypes.OBJECT},
        parameters=[OpenApiParameter("Stripe-Signature", str, OpenApiParameter.HEADER)],
        responses=WebhookOut,
    )
    def post(self, request: Request) -> Response:
        try:  # the raw body, never request.data: the signature covers the exact bytes
            event = webhook_verify(payload=request.body, signature=request.headers.get("Stripe-Signature"))
        except WebhookRefused as exc:
            raise ApiError(exc.code, str(exc)) from exc
        return Response({"received": True, "outcome": stripe_event_apply(event=event)})


class PostpaidIn(StrictSerializer):
    payment_method = serializers.RegexField(r"^pm_[A-Za-z0-9_]{1,60}$", help_text="a Stripe PaymentMethod id (pm_…)")


class PostpaidOut(serializers.Serializer[Any]):
    billing_mode = serializers.CharField()
    credit_limit_micros = serializers.IntegerField(
        help_text="what the gateway lends beyond the balance; set by operators"
    )
    payment_method = serializers.CharField(source="stripe_payment_method_id")


# What each refusal of the switch answers: the caller's card (402, like a declined payment), its input, Stripe
# down for now (503), this server without Stripe (409: nothing the caller can retry into success).
POSTPAID_STATUS = {"payment_method_declined": 402, "payment_method_invalid": 400, "stripe_unavailable": 503,
                   "stripe_not_configured": 409}  # fmt: skip


class TenantPostpaidView(TenantScopedView):
    @extend_schema(
        request=PostpaidIn,
        responses={
            200: PostpaidOut,
            402: OpenApiResponse(OpenApiTypes.OBJECT, description="Stripe declined the card (error shape)"),
            503: OpenApiResponse(OpenApiTypes.OBJECT, description="Stripe unreachable (error shape)"),
        },
        operation_id="tenants_postpaid_enable",
        description="Switch the tenant to postpaid: its Stripe customer, the payment method attached as the "
        "default for Stripe's invoices, then the switch; a refusal changes nothing.",
    )
    def post(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.TENANT_BILLING_UPDATE)
        data = PostpaidIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            tenant = postpaid_enable(
                tenant=self.membership.tenant, payment_method=data.validated_data["payment_method"]
            )
        except PostpaidRefused as exc:
            raise ApiError(exc.code, str(exc), param="payment_method", status_code=POSTPAID_STATUS[exc.code]) from exc
        return Response(PostpaidOut(tenant).data)
