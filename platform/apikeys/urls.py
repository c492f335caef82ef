from __future__ import annotations

from django.urls import path

from apikeys import views

urlpatterns = [
    path("tenants/<slug:tenant_slug>/keys/", views.KeyListView.as_view(), name="keys"),
    path("tenants/<slug:tenant_slug>/keys/<int:key_id>/", views.KeyDetailView.as_view(), name="key-detail"),
    path("tenants/<slug:tenant_slug>/keys/<int:key_id>/rotate/", views.KeyRotateView.as_view(), name="key-rotate"),
]
