from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from metering import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("generation", views.GenerationView.as_view(), name="generation"),
    path("generations", views.GenerationsView.as_view(), name="generations"),
    path("key", views.KeyView.as_view(), name="current-key"),
    path("stripe/webhook", views.StripeWebhookView.as_view(), name="stripe-webhook"),
    path("tenants/<slug:tenant_slug>/usage/", views.TenantUsageView.as_view(), name="tenant-usage"),
    path("tenants/<slug:tenant_slug>/generations/", views.TenantGenerationsView.as_view(), name="tenant-generations"),
    path("tenants/<slug:tenant_slug>/billing/postpaid", views.TenantPostpaidView.as_view(), name="tenant-postpaid"),
    path("tenants/<slug:tenant_slug>/usage.csv", views.TenantUsageCsvView.as_view(), name="tenant-usage-csv"),
]
