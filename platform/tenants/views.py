"""Thin API views: tenants, members, invitations."""

from __future__ import annotations

from typing import Any, cast

from django.db.models import Model
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from tenants import serializers as s
from tenants.api_base import TenantScopedView
from tenants.invitation_mail import invitation_send, site_url
from tenants.invitations import invitation_accept, invitation_revoke
from tenants.models import Membership
from tenants.permissions import Action
from tenants.selectors import (
    memberships_of,
    tenant_invitation_get,
    tenant_invitations,
    tenant_member_get,
    tenant_members,
)
from tenants.services import membership_change_role, membership_remove, tenant_create, tenant_settings_update


def tenant_data(membership: Membership) -> dict[str, Any]:
    tenant = membership.tenant
    return {**{name: getattr(tenant, name) for name in s.TENANT_FIELDS}, "role": membership.role}


def _out(serializer_cls: type[Any], obj: Model | dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**serializer_cls(obj).data, **extra}


class TenantListView(APIView):
    @extend_schema(responses=s.TenantOut(many=True), operation_id="tenants_list")
    def get(self, request: Request) -> Response:
        return Response([tenant_data(m) for m in memberships_of(user=request.user)])  # type: ignore[arg-type]

    @extend_schema(request=s.TenantCreateIn, responses={201: s.TenantOut}, operation_id="tenants_create")
    def post(self, request: Request) -> Response:
        data = s.TenantCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        tenant = tenant_create(owner=request.user, **data.validated_data)  # type: ignore[arg-type]
        membership = Membership.objects.select_related("tenant").get(tenant=tenant, user=cast(User, request.user))
        return Response(tenant_data(membership), status=status.HTTP_201_CREATED)


class TenantDetailView(TenantScopedView):
    @extend_schema(responses=s.TenantOut, operation_id="tenants_retrieve")
    def get(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.TENANT_VIEW)
        return Response(tenant_data(self.membership))

    @extend_schema(request=s.TenantUpdateIn, responses=s.TenantOut, operation_id="tenants_update")
    def patch(self, request: Request, tenant_slug: str) -> Response:
        data = s.TenantUpdateIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        if set(fields) - s.BILLING_FIELDS:
            self.require(Action.TENANT_UPDATE)
        if set(fields) & s.BILLING_FIELDS:
            self.require(Action.TENANT_BILLING_UPDATE)
        tenant_settings_update(tenant=self.membership.tenant, **fields)
        return Response(tenant_data(self.membership))


class MemberListView(TenantScopedView):
    @extend_schema(responses=s.MemberOut(many=True), operation_id="members_list")
    def get(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.MEMBER_LIST)
        return Response(s.MemberOut(tenant_members(membership=self.membership), many=True).data)


class MemberDetailView(TenantScopedView):
    @extend_schema(request=s.MemberUpdateIn, responses=s.MemberOut, operation_id="members_update")
    def patch(self, request: Request, tenant_slug: str, member_id: int) -> Response:
        member = tenant_member_get(membership=self.membership, member_id=member_id)
        self.require(Action.MEMBER_CHANGE_ROLE)
        data = s.MemberUpdateIn(data=request.data)
        data.is_valid(raise_exception=True)
        member = membership_change_role(actor=self.membership, member=member, role=data.validated_data["role"])
        return Response(s.MemberOut(member).data)

    @extend_schema(responses={204: None}, operation_id="members_remove")
    def delete(self, request: Request, tenant_slug: str, member_id: int) -> Response:
        member = tenant_member_get(membership=self.membership, member_id=member_id)
        if member.pk != self.membership.pk:  # anyone may leave; removing others needs the right
            self.require(Action.MEMBER_REMOVE)
        membership_remove(actor=self.membership if member.pk != self.membership.pk else member, member=member)
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationListView(TenantScopedView):
    @extend_schema(responses=s.InvitationOut(many=True), operation_id="invitations_list")
    def get(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.INVITATION_MANAGE)
        return Response(s.InvitationOut(tenant_invitations(membership=self.membership), many=True).data)

    @extend_schema(
        request=s.InvitationCreateIn,
        responses={201: s.InvitationCreatedOut, 200: s.InvitationCreatedOut},
        operation_id="invitations_create",
        description="Emails the acceptance link. Inviting an address with a pending invitation re-sends it "
        "(new link, new expiry; the earlier link stops working) and answers 200.",
    )
    def post(self, request: Request, tenant_slug: str) -> Response:
        self.require(Action.INVITATION_MANAGE)
        data = s.InvitationCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        sent = invitation_send(actor=self.membership, base_url=site_url(request), **data.validated_data)
        issued = sent.issued
        body = _out(
            s.InvitationOut,
            issued.invitation,
            token=issued.token,
            url=sent.link,
            resent=issued.resent,
            email_sent=sent.email_sent,
        )
        return Response(body, status=status.HTTP_200_OK if issued.resent else status.HTTP_201_CREATED)


class InvitationDetailView(TenantScopedView):
    @extend_schema(responses={204: None}, operation_id="invitations_revoke")
    def delete(self, request: Request, tenant_slug: str, invitation_id: int) -> Response:
        invitation = tenant_invitation_get(membership=self.membership, invitation_id=invitation_id)
        self.require(Action.INVITATION_MANAGE)
        invitation_revoke(invitation=invitation)
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationAcceptView(APIView):
    @extend_schema(request=s.InvitationAcceptIn, responses={201: s.TenantOut}, operation_id="invitations_accept")
    def post(self, request: Request) -> Response:
        data = s.InvitationAcceptIn(data=request.data)
        data.is_valid(raise_exception=True)
        membership = invitation_accept(token=data.validated_data["token"], user=request.user)  # type: ignore[arg-type]
        return Response(tenant_data(membership), status=status.HTTP_201_CREATED)
