"""The body's ``provider`` object (OpenRouter-style), validated into a typed value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from routing.http.errors import invalid_request

SORTS = ("price", "latency", "throughput")


@dataclass(frozen=True, slots=True)
class ProviderPrefs:
    order: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    sort: str | None = None
    allow_fallbacks: bool = True
    max_price_input: float | None = None  # USD per 1M tokens
    max_price_output: float | None = None
    require_parameters: bool = False


def _slugs(raw: dict[str, Any], name: str) -> tuple[str, ...]:
    value = raw.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid_request(f"provider.{name} must be a list of provider slugs.", param=f"provider.{name}")
    return tuple(value)


def _price(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise invalid_request(
            f"provider.max_price.{name} must be a number (USD per 1M tokens).", param="provider.max_price"
        )
    return float(value)


def parse(raw: dict[str, Any]) -> ProviderPrefs:
    if not raw:
        return ProviderPrefs()
    sort = raw.get("sort")
    if sort is not None and sort not in SORTS:
        raise invalid_request("provider.sort must be one of price, latency, throughput.", param="provider.sort")
    max_price = raw.get("max_price") or {}
    if not isinstance(max_price, dict):
        raise invalid_request("provider.max_price must be an object {prompt, completion}.", param="provider.max_price")
    return ProviderPrefs(
        order=_slugs(raw, "order"),
        only=_slugs(raw, "only"),
        ignore=_slugs(raw, "ignore"),
        sort=sort,
        allow_fallbacks=raw.get("allow_fallbacks") is not False,
        max_price_input=_price(max_price.get("prompt"), "prompt"),
        max_price_output=_price(max_price.get("completion"), "completion"),
        require_parameters=raw.get("require_parameters") is True,
    )
