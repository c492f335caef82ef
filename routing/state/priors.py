"""Priors and shrinkage: what the router assumes before evaluation has measured enough.

An estimate from n samples is pulled toward the prior with the weight of k pseudo-samples:
``(n·measured + k·prior) / (n + k)``. Proportions (errors, canary answers) use the same pseudo-counts
and then their one-sided 95% bound, so a small sample never looks better than it has shown.
Thresholds and the score formula: docs/routing.md.
"""

from __future__ import annotations

import math

Z_ONE_SIDED = 1.645  # one-sided 95% normal quantile

K_PRICE = 1  # price-truth probes: one checked probe weighs as much as the prior
K_PERF = 10  # performance probes behind TTFT and throughput
K_RELIABILITY = 20  # probes: one failed pair moves the error estimate by a tenth, never excludes alone
K_QUALITY = 20  # canary tasks
K_CACHE = 4  # cache probe turns

PRIOR_TTFT_MS = 800.0  # a model's TTFT before any offering of it was measured
PRIOR_TPS = 50.0
PRIOR_PREFILL_MS_PER_TOKEN = 0.02  # ~50k input tokens/s of prefill before ttft_10k is measured
PRIOR_ERROR_RATE = 0.02
PRIOR_CANARY_SHARE = 0.95  # share of canary tasks an honest offering answers right
PRIOR_CACHE_HIT = 0.5  # hit ratio assumed for an offering that caches, before cache probes
RESELLER_TRUST = 1.15  # an unverified third-party offering may over-count or over-bill this much


def shrink(measured: float | None, prior: float, n: int, k: float) -> float:
    if measured is None or n <= 0:
        return prior
    return (n * measured + k * prior) / (n + k)


def upper_share(share: float | None, prior: float, n: int, k: float) -> float:
    """One-sided 95% upper bound of a proportion after adding k pseudo-samples at ``prior``."""
    mean = shrink(share, prior, n, k)
    return min(1.0, mean + Z_ONE_SIDED * math.sqrt(mean * (1 - mean) / (max(n, 0) + k)))


def lower_share(share: float | None, prior: float, n: int, k: float) -> float:
    mean = shrink(share, prior, n, k)
    return max(0.0, mean - Z_ONE_SIDED * math.sqrt(mean * (1 - mean) / (max(n, 0) + k)))


def median(values: list[float], default: float) -> float:
    if not values:
        return default
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])
