"""Thin API views for BYOK provider credentials."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from catalog.models import Provider
from credentials import serializers as s
from credentials.selectors import tenant_credential_get, tenant_credentials
from credentials.services import credential_create, credential_delete, credential_update
from foundation.api_errors import ApiError
from tenants.api_base import TenantScopedView
from tenants.permissions import Action


class CredentialListView(TenantScopedView):
    @extend_schema(responses=s.CredentialOut(many=True), operation_id="credentials_list")
    def get(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.CREDENTIAL_LIST)
        return Response(s.CredentialOut(tenant_credentials(membership=self.membership), many=True).data)

    @extend_schema(request=s.CredentialCreateIn, responses={201: s.CredentialOut}, operation_id="credentials_create")
    def post(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.CREDENTIAL_MANAGE)
        data = s.CredentialCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        provider = Provider.objects.filter(slug=data.validated_data["provider"]).first()
        if provider is None:
            raise ApiError("unknown_provider", "no provider with this slug", param="provider")
        credential = credential_create(
            tenant=self.membership.tenant,
            provider=provider,
            secret=data.validated_data["secret"],
            base_url=data.validated_data["base_url"],
        )
        return Response(s.CredentialOut(credential).data, status=status.HTTP_201_CREATED)


class CredentialDetailView(TenantScopedView):
    @extend_schema(responses=s.CredentialOut, operation_id="credentials_retrieve")
    def get(self, request: Request, tenant_slug: str, credential_id: int) -> Response:
        self.require(Action.CREDENTIAL_LIST)
        return Response(
            s.CredentialOut(tenant_credential_get(membership=self.membership, credential_id=credential_id)).data
        )

    @extend_schema(request=s.CredentialUpdateIn, responses=s.CredentialOut, operation_id="credentials_update")
    def patch(self, request: Request, tenant_slug: str, credential_id: int) -> Response:
        credential = tenant_credential_get(membership=self.membership, credential_id=credential_id)
        self.require(Action.CREDENTIAL_MANAGE)
        data = s.CredentialUpdateIn(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(s.CredentialOut(credential_update(credential=credential, **data.validated_data)).data)

    @extend_schema(responses={204: None}, operation_id="credentials_delete")
    def delete(self, request: Request, tenant_slug: str, credential_id: int) -> Response:
        credential = tenant_credential_get(membership=self.membership, credential_id=credential_id)
        self.require(Action.CREDENTIAL_MANAGE)
        credential_delete(credential=credential)
        return Response(status=status.HTTP_204_NO_CONTENT)
