from __future__ import annotations

from django.urls import path

from tenants import views

urlpatterns = [
    path("tenants/", views.TenantListView.as_view(), name="tenants"),
    path("tenants/<slug:tenant_slug>/", views.TenantDetailView.as_view(), name="tenant"),
    path("tenants/<slug:tenant_slug>/members/", views.MemberListView.as_view(), name="members"),
    path("tenants/<slug:tenant_slug>/members/<int:member_id>/", views.MemberDetailView.as_view(), name="member"),
    path("tenants/<slug:tenant_slug>/invitations/", views.InvitationListView.as_view(), name="invitations"),
    path(
        "tenants/<slug:tenant_slug>/invitations/<int:invitation_id>/",
        views.InvitationDetailView.as_view(),
        name="invitation",
    ),
    path("invitations/accept/", views.InvitationAcceptView.as_view(), name="invitation-accept"),
]
