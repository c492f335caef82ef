"""Holt's linear smoothing of an offering's per-second request counts: how many requests the next
``horizon`` seconds will bring, and how wrong that forecast was on a recorded series.

Level ``L`` and trend ``T``, updated once per second with that second's count ``x``:
``L' = α·x + (1−α)(L+T)``, ``T' = β(L'−L) + (1−β)T``; the forecast for ``h`` seconds ahead is
``max(0, L + h·T)``. α and β were chosen on the series in bench/forecast_bench.py (docs/routing.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

ALPHA = 0.3  # level: a burst shows within ~3 s
BETA = 0.005  # trend: weak; a stronger one extrapolates noise over 15 s (bench/forecast_bench.py: β=0.1 was worse)
MAX_GAP_S = 120  # seconds folded in one catch-up; beyond this the level has decayed to ~0 anyway


@dataclass(slots=True)
class Holt:
    level: float = 0.0
    trend: float = 0.0
    alpha: float = ALPHA
    beta: float = BETA

    def add(self, count: float) -> None:
        previous = self.level
        self.level = self.alpha * count + (1 - self.alpha) * (self.level + self.trend)
        self.trend = self.beta * (self.level - previous) + (1 - self.beta) * self.trend

    def add_quiet(self, seconds: int) -> None:
        """``seconds`` seconds without a request (the gap between two busy seconds)."""
        for _ in range(min(seconds, MAX_GAP_S)):
            self.add(0.0)

    def over(self, horizon_s: float) -> float:
        """Requests expected in the next ``horizon_s`` seconds: Σ over h = 1..H of max(0, L + h·T),
        in closed form over the seconds where the line is above zero."""
        if horizon_s <= 0:
            return 0.0
        level, trend = self.level, self.trend
        first, last = 0.0, horizon_s  # h range where level + h·trend > 0
        if trend < 0:
            last = min(horizon_s, level / -trend) if level > 0 else 0.0
        elif trend > 0 and level < 0:
            first = min(horizon_s, -level / trend)
        span = last - first
        return max(0.0, span * level + trend * (last * last - first * first) / 2)


@dataclass(frozen=True, slots=True)
class ForecastError:
    horizon_s: int
    points: int  # forecasts scored
    mean_actual: float  # mean requests per horizon window
    mae: float  # mean absolute error of Holt's forecast (requests per window)
    mae_naive: float  # the same for "the last second repeats" (the baseline)

    @property
    def relative(self) -> float:
        """MAE as a share of the mean window's load (0.2 = off by 20% on average)."""
        return self.mae / self.mean_actual if self.mean_actual else 0.0


def forecast_error(
    counts: Sequence[float], *, horizon_s: int, warmup_s: int = 30, alpha: float = ALPHA, beta: float = BETA
) -> ForecastError:
    """Replay ``counts`` (requests per second) through Holt; at every second past ``warmup_s`` forecast
    the next ``horizon_s`` seconds' total and compare with what came."""
    holt = Holt(alpha=alpha, beta=beta)
    errors, naive, actuals = 0.0, 0.0, 0.0
    points = 0
    for t, count in enumerate(counts):
        holt.add(count)
        if t < warmup_s or t + horizon_s >= len(counts):
            continue
        actual = float(sum(counts[t + 1 : t + 1 + horizon_s]))
        errors += abs(holt.over(horizon_s) - actual)
        naive += abs(count * horizon_s - actual)
        actuals += actual
        points += 1
    if not points:
        return ForecastError(horizon_s, 0, 0.0, 0.0, 0.0)
    return ForecastError(horizon_s, points, actuals / points, errors / points, naive / points)
