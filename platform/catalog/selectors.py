"""Reads of the public catalog."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from catalog.models import Model, Offering, OfferingPrice, Provider


def providers_list() -> QuerySet[Provider]:
    return Provider.objects.order_by("slug")


def models_list() -> QuerySet[Model]:
    return Model.objects.order_by("slug")


def offerings_with_current_price() -> QuerySet[Offering]:
    """Offerings with ``current_prices`` = [latest OfferingPrice] (one query for all prices)."""
    latest = OfferingPrice.objects.order_by("offering_id", "-version").distinct("offering_id")
    return (
        Offering.objects.select_related("model", "provider")
        .prefetch_related(
            Prefetch(
                "prices", queryset=OfferingPrice.objects.filter(pk__in=latest.values("pk")), to_attr="current_prices"
            )
        )
        .order_by("model__slug", "provider__slug")
    )


def current_price(offering: Offering) -> OfferingPrice | None:
    prices = getattr(offering, "current_prices", None)
    if prices is not None:
        return prices[0] if prices else None
    return offering.prices.order_by("-version").first()
