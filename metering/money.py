"""Stripe amounts (integer cents) into ledger micro-units: the one conversion, read by every Stripe path."""

from __future__ import annotations

CENTS_TO_MICROS = 10_000


def cents_to_micros(value: object) -> int:
    """A Stripe amount in cents as micro-units; anything that is not a non-negative integer is 0."""
    return value * CENTS_TO_MICROS if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
