"""Ordering strategies. A strategy ranks candidates for a route mode; the default scorer
blends declared prices, the evaluation StatsSnapshot and live gateway signals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from contracts.snapshot import OfferingSnapshot, OfferingStats
from routing.failover.health import OfferingHealth

DEFAULT_TTFT_MS = 800.0  # assumed until evaluation or live traffic has measured an offering
DEFAULT_TPS = 50.0
AFFINITY_BONUS = 0.6  # how much worse (in score units) a cached offering may be and still win


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


# Weights per mode over (relative price, relative latency, relative slowness, 1 - quality).
MODE_WEIGHTS: dict[str, tuple[float, float, float, float]] = {
    "balanced": (0.4, 0.3, 0.1, 0.2),
    "cost": (1.0, 0.1, 0.0, 0.0),
    "performance": (0.1, 0.6, 0.3, 0.0),
    "quality": (0.15, 0.1, 0.0, 1.0),
}
RELIABILITY_WEIGHT = 3.0


class DefaultScorer:
    """Lower score is better; each term is relative to the best candidate so units cancel."""

    def rank(self, signals: list[Signals], *, mode: str, sort: str | None, affinity: int | None) -> list[Signals]:
        if sort is not None:
            return sorted(signals, key=_SORT_KEYS[sort])
        if len(signals) < 2:
            return signals
        best_cost = min(s.expected_cost for s in signals) or 1.0
        best_ttft = min(s.ttft_ms for s in signals) or 1.0
        best_tps = max(s.tps for s in signals) or 1.0
        weights = MODE_WEIGHTS.get(mode, MODE_WEIGHTS["balanced"])

        def score(s: Signals) -> float:
            terms = (s.expected_cost / best_cost, s.ttft_ms / best_ttft, best_tps / s.tps, 1 - s.quality)
            value = sum(w * t for w, t in zip(weights, terms, strict=True)) + RELIABILITY_WEIGHT * s.unreliability
            return value - (AFFINITY_BONUS if s.offering.offering_id == affinity else 0.0)

        return sorted(signals, key=score)


_SORT_KEYS = {
    "price": lambda s: s.expected_cost,
    "latency": lambda s: s.ttft_ms,
    "throughput": lambda s: -s.tps,
}
