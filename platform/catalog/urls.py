from __future__ import annotations

from django.urls import path

from catalog import views

urlpatterns = [
    path("catalog/providers/", views.ProviderListView.as_view(), name="catalog-providers"),
    path("catalog/models/", views.ModelListView.as_view(), name="catalog-models"),
    path("catalog/offerings/", views.OfferingListView.as_view(), name="catalog-offerings"),
]
