"""What the tenant pays for a request, from what the provider charges us.

Shared by the gateway (to hold and settle the tenant's balance) and metering (to
write the ledger), so both sides always agree to the micro-unit.
"""

from __future__ import annotations

BPS = 10_000
# BYOK requests are billed by the provider to the tenant directly; we charge a fee.
BYOK_FEE_BPS = 500  # 5% of the would-be provider cost


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def charge_micros(*, cost_micros: int, markup_bps: int, byok: bool) -> int:
    """Tenant price in micro-units: cost plus markup (rounded up), or the BYOK fee only."""
    if cost_micros <= 0:
        return 0
    if byok:
        return _ceil_div(cost_micros * BYOK_FEE_BPS, BPS)
    return cost_micros + _ceil_div(cost_micros * markup_bps, BPS)
