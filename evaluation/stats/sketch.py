"""Fixed log-spaced histogram buckets (DDSketch's mapping) and quantiles with CIs read from them.

A positive value x falls in bucket i = ceil(ln x / ln GAMMA); the bucket (GAMMA^(i-1), GAMMA^i] is
represented by 2·GAMMA^i / (GAMMA + 1), which is within ALPHA = (GAMMA - 1) / (GAMMA + 1) of every
value in it. Buckets are fixed, so counts from any set of rollups add up: a window's histogram is
the sum of its minutes', hours' and days' histograms, and PostgreSQL computes the same bucket
index (``ceil(ln(x) / ln(GAMMA))``) when it builds the rollups.

Quantiles follow ``quantiles.quantile_ci`` on the bucketed values exactly (type-7 interpolation
between the order statistics at (n-1)·p, order-statistic ranks n·p ± 1.96·sqrt(n·p·(1-p)) for the
95% interval), so a rollup answer equals the raw-row recompute to within ALPHA.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping

from evaluation.stats.estimate import Z95, Estimate

GAMMA = 1.01
ALPHA = (GAMMA - 1) / (GAMMA + 1)  # relative error of a bucket's representative: 0.4975%
MIN_VALUE = 1e-6  # values at or below zero (never expected) share the lowest bucket
_LN_GAMMA = math.log(GAMMA)


def bucket(value: float) -> int:
    return math.ceil(math.log(max(value, MIN_VALUE)) / _LN_GAMMA)


def representative(index: int) -> float:
    return 2 * GAMMA**index / (GAMMA + 1)


class Histogram:
    """Sorted bucket counts with rank lookup: the k-th smallest value (0-based) as its bucket's representative."""

    def __init__(self, counts: Mapping[int, int]) -> None:
        self.buckets = sorted(i for i, c in counts.items() if c > 0)
        self.cumulative: list[int] = []
        total = 0
        for index in self.buckets:
            total += counts[index]
            self.cumulative.append(total)
        self.n = total

    def at_rank(self, rank: int) -> float:
        return representative(self.buckets[bisect.bisect_right(self.cumulative, rank)])

    def quantile(self, p: float) -> float:
        position = (self.n - 1) * p
        low = math.floor(position)
        high = min(low + 1, self.n - 1)
        a, b = self.at_rank(low), self.at_rank(high)
        return a + (b - a) * (position - low)

    def quantile_ci(self, p: float) -> Estimate | None:
        if self.n == 0:
            return None
        spread = Z95 * math.sqrt(self.n * p * (1 - p))
        lo_rank = max(1, math.floor(self.n * p - spread))
        hi_rank = min(self.n, math.ceil(self.n * p + spread) + 1)
        return Estimate(self.quantile(p), self.at_rank(lo_rank - 1), self.at_rank(hi_rank - 1), self.n)
