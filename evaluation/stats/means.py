"""Means and ratios of sums with a Student-t interval that stays honest at small n.

Four probes that all read exactly 1.0 do not prove the truth is exactly 1.0, and their sample
variance (0) would say so: a zero-width interval. So the spread is estimated with a weak prior
worth ``PRIOR_DF`` probe(s): a per-metric ``prior_sd`` (the probe-to-probe spread assumed before
any is seen) pooled with the sample's own squared deviations,

    s² = (PRIOR_DF · prior_sd² + Σ (x − mean)²) / (PRIOR_DF + n − 1),    mean ± t(0.975, PRIOR_DF + n − 1) · s / √n

(the normal model's posterior for the mean under a scaled-inverse-χ² prior on the variance). The
interval always has positive width and contains the mean; the prior's weight fades as n grows, so
at large n it is the ordinary t interval. Only sums enter (n, Σd, Σd² with d = x − center), so the
same figure comes from raw rows and from any set of rollups.
"""

from __future__ import annotations

import functools
import math

from evaluation.stats.estimate import Z95, Estimate

PRIOR_DF = 1  # the assumed spread weighs as much as one probe
EXACT_DF = 60  # bisection costs ~60 x df/2 steps, once per df


def _within(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with df degrees of freedom (Abramowitz & Stegun 26.7.3-4, exact)."""
    theta = math.atan(t / math.sqrt(df))
    cos2, term = math.cos(theta) ** 2, 1.0
    if df % 2 == 0:
        total = 1.0
        for j in range(2, df, 2):  # (1·3···(j−1)) / (2·4···j) cos^j
            term *= cos2 * (j - 1) / j
            total += term
        return math.sin(theta) * total
    if df == 1:
        return 2 * theta / math.pi
    total = term = math.cos(theta)
    for j in range(3, df, 2):  # (2·4···(j−1)) / (1·3···j) cos^j
        term *= cos2 * (j - 1) / j
        total += term
    return 2 / math.pi * (theta + math.sin(theta) * total)


def _cornish_fisher(df: int) -> float:
    z, v = Z95, float(df)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
    )


@functools.cache
def t975(df: int) -> float:
    """The 0.975 quantile of Student's t (two-sided 95%): by bisection of the exact distribution function up
    to ``EXACT_DF`` degrees of freedom, beyond by its Cornish-Fisher expansion (off by less than 1e-6)."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df > EXACT_DF:
        return _cornish_fisher(df)
    low, high = Z95, 64.0  # t(0.975, 1) = 12.71
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if _within(middle, df) < 0.95 else (low, middle)
    return (low + high) / 2


def half_width(n: int, squared_deviations: float, prior_sd: float) -> float:
    """Half the 95% interval of a mean of n values whose squared deviations from their mean sum to this."""
    df = PRIOR_DF + n - 1
    variance = (PRIOR_DF * prior_sd * prior_sd + max(squared_deviations, 0.0)) / df
    return t975(df) * math.sqrt(variance / n)


def mean_ci(n: int, total: float, squares: float, *, center: float, prior_sd: float) -> Estimate | None:
    """The mean of n values given Σ(x − center) and Σ(x − center)², with its 95% interval."""
    if n <= 0:
        return None
    shift = total / n
    mean = center + shift
    half = half_width(n, squares - total * shift, prior_sd)
    return Estimate(mean, mean - half, mean + half, n)
