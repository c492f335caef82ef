"""Reads of the public catalog."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from catalog.models import Model, Provider
from catalog.models import Offering as Offering  # re-exported with OfferingPrice: the leaderboard's rows are typed
from catalog.models import OfferingPrice as OfferingPrice


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


def integrity_pending(offering: Offering, price: OfferingPrice | None) -> bool:
    """Its price-truth or quality-canary probe has not run since its current price took effect
    (a new offering, or one whose price changed): the gateway does not route to it yet."""
    since = price.effective_from if price is not None else None
    probed = (offering.price_probed_at, offering.quality_probed_at)
    return any(at is None or (since is not None and at < since) for at in probed)


def offerings_listed() -> QuerySet[Offering]:
    """Offerings that are not disabled, with ``current_prices`` (the leaderboard lists measured or not)."""
    return offerings_with_current_price().exclude(status="disabled")


def offerings_active_count() -> int:
    return Offering.objects.exclude(status="disabled").count()


def model_choices() -> list[tuple[str, str]]:
    """(slug, name) of every model, by slug."""
    return list(Model.objects.order_by("slug").values_list("slug", "name"))


def provider_choices() -> list[tuple[str, str]]:
    """(slug, name) of every provider, by name."""
    return list(Provider.objects.order_by("name").values_list("slug", "name"))


def provider_get(*, slug: str) -> Provider:
    return Provider.objects.get(slug=slug)
