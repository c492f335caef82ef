"""Percentile bootstrap CI for statistics without a closed form (ratios of sums, derived prices)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from evaluation.stats.estimate import Estimate
from evaluation.stats.quantiles import quantile

T = TypeVar("T")

# Resamples per interval: the 2.5/97.5% endpoints settle to ~1% at a few hundred; aggregation runs every minute.
RESAMPLES = 400


def bootstrap(
    items: Sequence[T], statistic: Callable[[Sequence[T]], float], *, seed: int = 0, resamples: int = RESAMPLES
) -> Estimate | None:
    """Seeded, so the same data always gives the same interval (stable leaderboard, reproducible tests)."""
    if not items:
        return None
    rng = random.Random(seed)
    n = len(items)
    draws = sorted(statistic([items[rng.randrange(n)] for _ in range(n)]) for _ in range(resamples))
    return Estimate(statistic(items), quantile(draws, 0.025), quantile(draws, 0.975), n)
