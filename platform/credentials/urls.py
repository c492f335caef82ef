from __future__ import annotations

from django.urls import path

from credentials import views

urlpatterns = [
    path("tenants/<slug:tenant_slug>/credentials/", views.CredentialListView.as_view(), name="credentials"),
    path(
        "tenants/<slug:tenant_slug>/credentials/<int:credential_id>/",
        views.CredentialDetailView.as_view(),
        name="credential",
    ),
]
