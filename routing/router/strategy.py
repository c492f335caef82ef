"""Ordering strategies. A strategy ranks candidates for a route mode; the default scorer
blends declared prices, the evaluation StatsSnapshot and live gateway signals."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from contracts.snapshot import OfferingSnapshot, OfferingStats
from routing.failover.health import OfferingHealth

DEFAULT_TTFT_MS = 800.0  # assumed until evaluation or live traffic has measured an offering
DEFAULT_TPS = 50.0
AFFINITY_BONUS = 0.6  # score units (≈ 1.5 price doublings in balanced mode) a cached offering may trail by


@dataclass(frozen=True, slots=True)
class Signals:
    """Everything known about one candidate when ranking."""

    offering: OfferingSnapshot
    stats: OfferingStats | None
    health: OfferingHealth | None
    expected_cost: float  # micro-units for this request's estimated tokens at declared prices

    @property
    def ttft_ms(self) -> float:
        if self.health is not None and self.health.latency_ms is not None:
            if self.stats is not None and self.stats.ttft_p50_ms is not None:
                return 0.5 * (self.stats.ttft_p50_ms + self.health.latency_ms)
            return self.health.latency_ms
        return self.stats.ttft_p50_ms if self.stats and self.stats.ttft_p50_ms is not None else DEFAULT_TTFT_MS

    @property
    def tps(self) -> float:
        return self.stats.tps_p50 if self.stats and self.stats.tps_p50 else DEFAULT_TPS

    @property
    def quality(self) -> float:
        if self.stats is not None and self.stats.quality_score is not None:
            return self.stats.quality_score
        return self.offering.quality

    @property
    def unreliability(self) -> float:
        """0 (perfect) .. ~2: evaluation's availability/error rate and the live error EWMA."""
        stats_errors = 0.0
        if self.stats is not None:
            stats_errors = (1 - (self.stats.availability if self.stats.availability is not None else 1.0)) + (
                self.stats.error_rate or 0.0
            )
        live = self.health.error_rate if self.health is not None else 0.0
        return stats_errors + live + (0.5 if self.offering.status == "degraded" else 0.0)


class Strategy(Protocol):
    def rank(self, signals: list[Signals], *, mode: str, sort: str | None, affinity: int | None) -> list[Signals]: ...


# Weights per mode over (price doublings, latency doublings, slowness doublings, quality gap × 10):
# every term is a log2 ratio to the best candidate, so 0.1 of quality weighs like one doubling.
MODE_WEIGHTS: dict[str, tuple[float, float, float, float]] = {
    "balanced": (0.4, 0.3, 0.1, 0.2),
    "cost": (1.0, 0.1, 0.0, 0.0),
    "performance": (0.1, 0.6, 0.3, 0.0),
    "quality": (0.15, 0.1, 0.0, 1.0),
}
QUALITY_SCALE = 10.0
RELIABILITY_WEIGHT = 3.0  # unreliability 0..2 -> up to six doublings


def _doublings(value: float, best: float) -> float:
    return math.log2(max(value, 1e-9) / max(best, 1e-9))


class DefaultScorer:
    """Lower score is better; each term is relative to the best candidate so units cancel."""

    def rank(self, signals: list[Signals], *, mode: str, sort: str | None, affinity: int | None) -> list[Signals]:
        if sort is not None:
            return sorted(signals, key=_SORT_KEYS[sort])
        if len(signals) < 2:
            return signals
        best_cost = min(s.expected_cost for s in signals)
        best_ttft = min(s.ttft_ms for s in signals)
        best_tps = max(s.tps for s in signals)
        best_quality = max(s.quality for s in signals)
        weights = MODE_WEIGHTS.get(mode, MODE_WEIGHTS["balanced"])

        def score(s: Signals) -> float:
            terms = (
                _doublings(s.expected_cost, best_cost),
                _doublings(s.ttft_ms, best_ttft),
                _doublings(best_tps, s.tps),
                (best_quality - s.quality) * QUALITY_SCALE,
            )
            value = sum(w * t for w, t in zip(weights, terms, strict=True)) + RELIABILITY_WEIGHT * s.unreliability
            return value - (AFFINITY_BONUS if s.offering.offering_id == affinity else 0.0)

        return sorted(signals, key=score)


_SORT_KEYS: dict[str, Callable[[Signals], float]] = {
    "price": lambda s: s.expected_cost,
    "latency": lambda s: s.ttft_ms,
    "throughput": lambda s: -s.tps,
}
