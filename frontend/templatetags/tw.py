"""Display filters: money in micro-units, percentages, milliseconds. Formatting only, no logic."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import template

from contracts.usage import MICROS_PER_UNIT

register = template.Library()
DASH = "—"


def _number(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@register.filter
def money(micros: Any) -> str:
    """Integer micro-units -> "$1.2345": 4 decimals below $1,000 (a request costs fractions of a cent)."""
    if micros is None:
        return DASH
    amount = Decimal(int(micros)) / MICROS_PER_UNIT
    places = "0.01" if abs(amount) >= 1000 else "0.0001"
    return f"${amount.quantize(Decimal(places)):,}"


@register.filter
def money_exact(micros: Any) -> str:
    """Integer micro-units -> "$19.999974": every micro-unit shows, so one cheap request moves a balance."""
    if micros is None:
        return DASH
    return f"${(Decimal(int(micros)) / MICROS_PER_UNIT).quantize(Decimal('0.000001')):,}"


@register.filter
def pct(ratio: Any, places: int = 1) -> str:
    number = _number(ratio)
    return DASH if number is None else f"{number * 100:.{int(places)}f}%"


@register.filter
def ms(value: Any) -> str:
    number = _number(value)
    return DASH if number is None else f"{number:,.0f} ms"


@register.filter
def num(value: Any, places: int = 0) -> str:
    number = _number(value)
    return DASH if number is None else f"{number:,.{int(places)}f}"


@register.filter
def sortkey(value: Any) -> str:
    """Value for the table's data-sort attribute: numbers as numbers, missing sorts last."""
    number = _number(value)
    if number is not None:
        return repr(number)
    return "" if value is None else str(value).lower()
