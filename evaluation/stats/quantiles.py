"""Sample quantiles with a distribution-free 95% CI from order statistics.

For the p-quantile of n values, the number of values below it is Binomial(n, p),
so the ranks n·p ± z·sqrt(n·p·(1-p)) (rounded outwards, clamped to 1..n) bracket it
with about 95% coverage. Valid for any continuous distribution (latencies are skewed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from evaluation.stats.estimate import Z95, Estimate


def quantile(sorted_values: Sequence[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default, 'type 7')."""
    if not sorted_values:
        raise ValueError("quantile of no values")
    position = (len(sorted_values) - 1) * p
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def quantile_ci(values: Sequence[float], p: float) -> Estimate | None:
    if not values:
        return None
    ordered = sorted(values)
    n = len(ordered)
    spread = Z95 * math.sqrt(n * p * (1 - p))
    lo_rank = max(1, math.floor(n * p - spread))
    hi_rank = min(n, math.ceil(n * p + spread) + 1)
    return Estimate(quantile(ordered, p), ordered[lo_rank - 1], ordered[hi_rank - 1], n)


def median(values: Sequence[float]) -> float:
    return quantile(sorted(values), 0.5)


def mad(values: Sequence[float]) -> float:
    """Median absolute deviation scaled to a normal sigma (x1.4826)."""
    center = median(values)
    return 1.4826 * median([abs(v - center) for v in values])
