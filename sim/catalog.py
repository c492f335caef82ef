"""Read the catalog file (docs/catalog-format.md) into plain specs the fleet serves."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from contracts.usage import Prices

DEFAULT_CATALOG = Path(__file__).resolve().parent.parent / "catalog" / "demo.yaml"
_PROVIDER_OVERRIDABLE = (
    "dialect",
    "usage_dialect",
    "cached_tokens_in_input",
    "cache_policy",
    "cache_ttl_s",
    "keeps_billing_block",
)


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
        cache_read=int(raw.get("cache_read") or 0),
        cache_write_5m=int(raw.get("cache_write_5m") or 0),
        cache_write_1h=int(raw.get("cache_write_1h") or 0),
        reasoning=None if raw.get("reasoning") is None else int(raw["reasoning"]),
    )


def _offering(raw: dict[str, Any], provider: dict[str, Any], model: dict[str, Any]) -> OfferingSpec:
    merged = {key: raw.get(key, provider.get(key)) for key in _PROVIDER_OVERRIDABLE}
    return OfferingSpec(
        provider=provider["slug"],
        model=model["slug"],
        upstream_model=raw.get("upstream_model") or model["slug"],
        dialect=merged["dialect"] or "openai",
        usage_dialect=merged["usage_dialect"] or "openai",
        cached_tokens_in_input=bool(
            merged["cached_tokens_in_input"] if merged["cached_tokens_in_input"] is not None else True
        ),
        cache_policy=merged["cache_policy"] or "normalized",
        cache_ttl_s=int(merged["cache_ttl_s"] or 300),
        keeps_billing_block=bool(merged["keeps_billing_block"]),
        context_window=int(raw.get("context_window") or model["context_window"]),
        max_output=int(raw.get("max_output") or model["max_output"]),
        prices=_prices(raw["prices"]),
        parameters=tuple(raw.get("parameters") or ()),
        rpm=raw.get("rpm"),
        tpm=raw.get("tpm"),
        status=raw.get("status", "active"),
    )


def load_catalog(path: Path | str = DEFAULT_CATALOG) -> dict[str, ProviderSpec]:
    data = yaml.safe_load(Path(path).read_text())
    providers = {item["slug"]: item for item in data["providers"]}
    models = {item["slug"]: item for item in data["models"]}
    grouped: dict[str, list[OfferingSpec]] = {slug: [] for slug in providers}
    for raw in data["offerings"]:
        grouped[raw["provider"]].append(_offering(raw, providers[raw["provider"]], models[raw["model"]]))
    return {
        slug: ProviderSpec(
            slug=slug,
            name=item.get("name", slug),
            dialect=item.get("dialect", "openai"),
            offerings=tuple(grouped[slug]),
        )
        for slug, item in providers.items()
    }


@dataclass(frozen=True, slots=True)
class ModelSpec:
    slug: str
    author: str = ""
    aliases: tuple[str, ...] = ()


def load_models(path: Path | str = DEFAULT_CATALOG) -> tuple[ModelSpec, ...]:
    """The catalog's models in file order, with the names callers may use for them."""
    data = yaml.safe_load(Path(path).read_text())
    return tuple(
        ModelSpec(item["slug"], item.get("author") or "", tuple(item.get("aliases") or ())) for item in data["models"]
    )
