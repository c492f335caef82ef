"""Thin API views for API keys."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from apikeys import serializers as s
from apikeys.models import ApiKey
from apikeys.selectors import tenant_key_get, tenant_keys
from apikeys.services import IssuedKey, api_key_issue, api_key_revoke, api_key_rotate, api_key_update_limits
from tenants.api_base import TenantScopedView
from tenants.permissions import Action


def _created(issued: IssuedKey) -> Response:
    data = {**s.KeyOut(issued.api_key).data, "key": issued.plaintext}
    return Response(data, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})


class KeyListView(TenantScopedView):
    @extend_schema(responses=s.KeyOut(many=True), operation_id="keys_list")
    def get(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.KEY_LIST)
        return Response(s.KeyOut(tenant_keys(membership=self.membership), many=True).data)

    @extend_schema(request=s.KeyCreateIn, responses={201: s.KeyCreatedOut}, operation_id="keys_create")
    def post(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.KEY_CREATE)
        data = s.KeyCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        issued = api_key_issue(tenant=self.membership.tenant, created_by=self.membership.user, **data.validated_data)
        return _created(issued)


class KeyDetailBase(TenantScopedView):
    def key_to_manage(self, key_id: int) -> ApiKey:
        api_key = tenant_key_get(membership=self.membership, key_id=key_id)
        own = api_key.created_by_id == self.membership.user_id
        self.require(Action.KEY_MANAGE_OWN if own else Action.KEY_MANAGE_ANY)
        return api_key


class KeyDetailView(KeyDetailBase):
    @extend_schema(responses=s.KeyOut, operation_id="keys_retrieve")
    def get(self, request: Request, tenant_slug: str, key_id: int) -> Response:
        self.require(Action.KEY_LIST)
        return Response(s.KeyOut(tenant_key_get(membership=self.membership, key_id=key_id)).data)

    @extend_schema(request=s.KeyLimitsIn, responses=s.KeyOut, operation_id="keys_update")
    def patch(self, request: Request, tenant_slug: str, key_id: int) -> Response:
        api_key = self.key_to_manage(key_id)
        data = s.KeyLimitsIn(data=request.data)
        data.is_valid(raise_exception=True)
        may_extend = self.allows(Action.KEY_EXTEND_EXPIRY)
        updated = api_key_update_limits(key=api_key, may_extend_expiry=may_extend, **data.validated_data)
        return Response(s.KeyOut(updated).data)

    @extend_schema(responses={200: s.KeyOut}, operation_id="keys_revoke")  # revoke answers with the key
    def delete(self, request: Request, tenant_slug: str, key_id: int) -> Response:
        return Response(s.KeyOut(api_key_revoke(key=self.key_to_manage(key_id))).data)


class KeyRotateView(KeyDetailBase):
    @extend_schema(request=s.KeyRotateIn, responses={201: s.KeyCreatedOut}, operation_id="keys_rotate")
    def post(self, request: Request, tenant_slug: str, key_id: int) -> Response:
        api_key = self.key_to_manage(key_id)
        data = s.KeyRotateIn(data=request.data)
        data.is_valid(raise_exception=True)
        grace_until = timezone.now() + timedelta(seconds=data.validated_data["grace_seconds"])
        return _created(api_key_rotate(key=api_key, grace_until=grace_until, rotated_by=self.membership.user))
