"""Wilson score interval for a proportion: well-behaved at 0, 1 and small n (unlike the Wald interval)."""

from __future__ import annotations

import math

from evaluation.stats.estimate import Z95, Estimate


def wilson(successes: int, n: int, z: float = Z95) -> Estimate | None:
    if n <= 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Estimate(p, max(0.0, center - half), min(1.0, center + half), n)
