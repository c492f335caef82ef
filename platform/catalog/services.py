"""Apply a parsed catalog to the database: idempotent, one transaction, prices versioned."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from catalog.models import Model, Offering, OfferingPrice, OfferingStatus, Provider
from catalog.selectors import current_price, integrity_pending
from contracts.catalog_file import PROVIDER_OVERRIDABLE, CatalogSpec
from outbox.models import Topic
from outbox.services import outbox_add

OFFERING_OVERRIDES = PROVIDER_OVERRIDABLE  # left out (None) -> the provider's value at publish time
OFFERING_PLAIN = (
    "upstream_model", "context_window", "max_output", "max_reasoning_tokens", "parameters", "rpm", "tpm", "status",
)  # fmt: skip
WHAT_IS_SERVED = ("upstream_model", "base_url", "dialect", "usage_dialect")  # a change: integrity probed again
PRICE_FIELDS = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h", "reasoning")


@dataclass
class CatalogDiff:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)

    def lines(self) -> list[str]:
        out = [f"+ {item}" for item in self.added]
        out += [f"~ {item}" for item in self.changed]
        out += [f"- {item}" for item in self.removed]
        summary = f"added {len(self.added)}, changed {len(self.changed)}, removed {len(self.removed)}"
        return [*out, "no changes" if self.empty else summary]


def _upsert(model_cls: Any, lookup: dict[str, Any], values: dict[str, Any], label: str, diff: CatalogDiff) -> Any:
    obj = model_cls.objects.filter(**lookup).first()
    if obj is None:
        diff.added.append(label)
        return model_cls.objects.create(**lookup, **values)
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    if changed:
        for name in changed:
            setattr(obj, name, values[name])
        obj.save(update_fields=changed)
        diff.changed.append(f"{label}: {', '.join(changed)}")
    return obj


def _apply_prices(offering: Offering, prices: dict[str, Any], label: str, diff: CatalogDiff) -> None:
    current = offering.prices.order_by("-version").first()
    if current is not None and all(getattr(current, name) == prices[name] for name in PRICE_FIELDS):
        return
    version = 1 if current is None else current.version + 1
    OfferingPrice.objects.create(offering=offering, version=version, **{name: prices[name] for name in PRICE_FIELDS})
    if current is not None:
        changes = [
            f"{n} {getattr(current, n)} -> {prices[n]}" for n in PRICE_FIELDS if getattr(current, n) != prices[n]
        ]
        diff.changed.append(f"{label}: price v{current.version} -> v{version} ({', '.join(changes)})")


def _forget_integrity(offering: Offering) -> None:
    offering.price_probed_at = offering.quality_probed_at = None
    offering.save(update_fields=["price_probed_at", "quality_probed_at"])


def _offering_values(data: dict[str, Any]) -> dict[str, Any]:
    values = {name: data[name] for name in OFFERING_PLAIN}
    for name in OFFERING_OVERRIDES:
        value = data[name]
        values[name] = (
            ("" if name in {"base_url", "dialect", "usage_dialect", "cache_policy"} else None)
            if value is None
            else value
        )
    return values


def _retire_missing(spec: CatalogSpec, diff: CatalogDiff) -> None:
    """Offerings gone from the file are disabled (their price history stays); empty models/providers go."""
    for offering in Offering.objects.select_related("model", "provider").exclude(status=OfferingStatus.DISABLED):
        if (offering.model.slug, offering.provider.slug) not in spec.offerings:
            offering.status = OfferingStatus.DISABLED
            offering.save(update_fields=["status"])
            diff.removed.append(f"offering {offering.model.slug}@{offering.provider.slug} (disabled)")
    for model in Model.objects.exclude(slug__in=list(spec.models)).filter(offerings__isnull=True):
        diff.removed.append(f"model {model.slug}")
        model.delete()
    for provider in Provider.objects.exclude(slug__in=list(spec.providers)).filter(offerings__isnull=True):
        diff.removed.append(f"provider {provider.slug}")
        provider.delete()


def catalog_apply(*, spec: CatalogSpec, publish: bool = True) -> CatalogDiff:
    diff = CatalogDiff()
    with transaction.atomic():
        providers = {
            slug: _upsert(
                Provider, {"slug": slug}, {k: v for k, v in data.items() if k != "slug"}, f"provider {slug}", diff
            )
            for slug, data in spec.providers.items()
        }
        models = {
            slug: _upsert(Model, {"slug": slug}, {k: v for k, v in data.items() if k != "slug"}, f"model {slug}", diff)
            for slug, data in spec.models.items()
        }
        for (model_slug, provider_slug), data in spec.offerings.items():
            label = f"offering {model_slug}@{provider_slug}"
            lookup = {"model": models[model_slug], "provider": providers[provider_slug]}
            served = Offering.objects.filter(**lookup).values(*WHAT_IS_SERVED).first()
            offering = _upsert(Offering, lookup, _offering_values(data), label, diff)
            if served is not None and any(served[name] != getattr(offering, name) for name in WHAT_IS_SERVED):
                _forget_integrity(offering)  # another model or endpoint behind it: its probes must run again
            _apply_prices(offering, data["prices"], label, diff)
        _retire_missing(spec, diff)
        if publish:  # the snapshot is published once this commits (publishing.drain)
            outbox_add(topic=Topic.CATALOG)
    return diff


INTEGRITY_FIELDS = {"price": "price_probed_at", "quality": "quality_probed_at"}  # probe kind -> Offering field


def integrity_probes_ran(*, ran: dict[tuple[int, str], dt.datetime]) -> list[int]:
    """Record when each (offering, probe kind) integrity probe last ran; the offerings that became
    routable by it (their last missing probe ran after their current price took effect) are returned
    and the catalog is republished for them."""
    flipped: list[int] = []
    if not ran:
        return flipped
    with transaction.atomic():
        ids = {offering_id for offering_id, _ in ran}
        for offering in Offering.objects.select_for_update().filter(pk__in=ids).order_by("pk"):
            before = integrity_pending(offering, current_price(offering))
            changed = []
            for kind, name in INTEGRITY_FIELDS.items():
                at = ran.get((offering.pk, kind))
                current = getattr(offering, name)
                if at is not None and (current is None or at > current):
                    setattr(offering, name, at)
                    changed.append(name)
            if changed:
                offering.save(update_fields=changed)
            if before and not integrity_pending(offering, current_price(offering)):
                flipped.append(offering.pk)
        if flipped:
            outbox_add(topic=Topic.CATALOG)
    return flipped
