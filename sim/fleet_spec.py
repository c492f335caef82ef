"""Read the catalog file (docs/catalog-format.md) into plain specs the fleet serves."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contracts.catalog_file import CatalogSpec, effective_offering, parse_catalog
from contracts.usage import Prices

DEFAULT_CATALOG = Path(__file__).resolve().parent.parent / "demo" / "catalog.yaml"


@dataclass(frozen=True, slots=True)
class OfferingSpec:
    provider: str
    model: str
    upstream_model: str
    dialect: str
    usage_dialect: str
    cached_tokens_in_input: bool
    cache_policy: str
    cache_ttl_s: int
    keeps_billing_block: bool
    context_window: int
    max_output: int
    prices: Prices
    parameters: tuple[str, ...] = ()
    rpm: int | None = None
    tpm: int | None = None
    status: str = "active"
    max_reasoning_tokens: int = 0  # reasoning beyond the caller's max_tokens (contracts.holds)


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    slug: str
    name: str
    dialect: str
    offerings: tuple[OfferingSpec, ...] = field(default_factory=tuple)


def _prices(raw: dict[str, Any]) -> Prices:
    return Prices(
        input=int(raw["input"]),
        output=int(raw["output"]),
        cache_read=int(raw["cache_read"]),
        cache_write_5m=int(raw["cache_write_5m"]),
        cache_write_1h=int(raw["cache_write_1h"]),
        reasoning=None if raw["reasoning"] is None else int(raw["reasoning"]),
    )


def _offering(raw: dict[str, Any]) -> OfferingSpec:
    return OfferingSpec(
        provider=raw["provider"],
        model=raw["model"],
        upstream_model=raw["upstream_model"],
        dialect=raw["dialect"],
        usage_dialect=raw["usage_dialect"],
        cached_tokens_in_input=bool(raw["cached_tokens_in_input"]),
        cache_policy=raw["cache_policy"],
        cache_ttl_s=int(raw["cache_ttl_s"]),
        keeps_billing_block=bool(raw["keeps_billing_block"]),
        context_window=int(raw["context_window"]),
        max_output=int(raw["max_output"]),
        prices=_prices(raw["prices"]),
        parameters=tuple(raw["parameters"]),
        rpm=raw["rpm"],
        tpm=raw["tpm"],
        status=raw["status"],
        max_reasoning_tokens=int(raw["max_reasoning_tokens"]),
    )


def read_catalog(path: Path | str = DEFAULT_CATALOG) -> CatalogSpec:
    """The catalog file through the platform's own reader (contracts.catalog_file): same checks, same errors."""
    path = Path(path)
    return parse_catalog(path.read_text(encoding="utf-8"), filename=path.name)


def load_catalog(path: Path | str = DEFAULT_CATALOG) -> dict[str, ProviderSpec]:
    spec = read_catalog(path)
    grouped: dict[str, list[OfferingSpec]] = {slug: [] for slug in spec.providers}
    for key in spec.offerings:
        offering = _offering(effective_offering(spec, key))
        grouped[offering.provider].append(offering)
    return {
        slug: ProviderSpec(slug=slug, name=item["name"], dialect=item["dialect"], offerings=tuple(grouped[slug]))
        for slug, item in spec.providers.items()
    }


@dataclass(frozen=True, slots=True)
class ModelSpec:
    slug: str
    author: str = ""
    aliases: tuple[str, ...] = ()


def load_models(path: Path | str = DEFAULT_CATALOG) -> tuple[ModelSpec, ...]:
    """The catalog's models in file order, with the names callers may use for them."""
    return tuple(
        ModelSpec(item["slug"], item["author"] or "", tuple(item["aliases"]))
        for item in read_catalog(path).models.values()
    )
