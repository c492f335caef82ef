"""Ordering strategies. A strategy scores candidates for a route mode; the default scorer blends
the per-snapshot estimates (routing.router.estimates) with this request's size and live signals.

Score (lower is better), a sum of named parts, each relative to the best candidate so units cancel:
  cost        w_cost    · log2(expected cost / cheapest)
  ttft        w_ttft    · log2(predicted TTFT / fastest)
  tps         w_tps     · log2(fastest throughput / throughput)
  quality     w_quality · 10 · (best quality − quality)
  reliability 3 · (unreliability − least unreliable)  (evaluation's bound + live errors + ½ live 429s)
  flags       flag, incident and status penalties
  affinity    −0.6 · expected cache hit, for the offering that holds this conversation's prefix
Candidates with an integrity flag come after all others whatever their score. docs/routing.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from contracts.snapshot import OfferingSnapshot, OfferingStats
from routing.failover.live import QUIET, Live
from routing.router.estimates import TTFT_REFERENCE_TOKENS, OfferingEstimate, estimate_solo

DEFAULT_INPUT_TOKENS = TTFT_REFERENCE_TOKENS
DEFAULT_OUTPUT_TOKENS = 256
AFFINITY_BONUS = 0.6  # score units at a 100% expected hit (≈ 1.5 price doublings in balanced mode)
THROTTLE_SHARE = 0.5  # a 429 counts as half a failure: the offering works, it is only full


@dataclass(frozen=True, slots=True)
class Signals:
    """Everything known about one candidate when ranking."""

    offering: OfferingSnapshot
    stats: OfferingStats | None
    live: Live | None
    expected_cost: float  # micro-units for this request (cache split and price truth applied)
    estimate: OfferingEstimate | None = None  # None: estimated from ``stats`` alone
    uncached_input: int = DEFAULT_INPUT_TOKENS
    output_tokens: int = DEFAULT_OUTPUT_TOKENS

    def resolved(self) -> OfferingEstimate:
        return self.estimate if self.estimate is not None else estimate_solo(self.offering, self.stats)


@dataclass(frozen=True, slots=True)
class Measures:
    cost: float
    ttft_ms: float
    tps: float
    quality: float
    unreliability: float
    penalty: float
    cache_hit: float
    last_resort: bool


def measure(s: Signals) -> Measures:
    est, live = s.resolved(), s.live or QUIET
    static_ttft = est.ttft_ms + est.prefill_ms_per_token * max(0, s.uncached_input - TTFT_REFERENCE_TOKENS)
    live_errors = 0.0 if live.half_open else live.error_rate + THROTTLE_SHARE * live.throttle_rate
    return Measures(
        cost=s.expected_cost,
        ttft_ms=live.blend_ttft(static_ttft),
        tps=est.tps,
        quality=est.quality,
        unreliability=est.unreliability + live_errors,
        penalty=est.flag_penalty,
        cache_hit=est.cache_hit,
        last_resort=est.last_resort,
    )


@dataclass(frozen=True, slots=True)
class Scored:
    signals: Signals
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    last_resort: bool = False


class Strategy(Protocol):
    def scored(self, signals: list[Signals], *, mode: str, sort: str | None, affinity: int | None) -> list[Scored]:
        """Candidates in attempt order, each with its score and the parts that sum to it."""
        ...


# Weights per mode over (cost, ttft, tps, quality) terms.
MODE_WEIGHTS: dict[str, tuple[float, float, float, float]] = {
    "balanced": (0.4, 0.3, 0.1, 0.2),
    "cost": (1.0, 0.1, 0.0, 0.0),
    "performance": (0.1, 0.6, 0.3, 0.0),
    "quality": (0.15, 0.1, 0.0, 1.0),
}
QUALITY_SCALE = 10.0
RELIABILITY_WEIGHT = 3.0  # an error share of 1/3 weighs one doubling


def _doublings(value: float, best: float) -> float:
    return math.log2(max(value, 1e-9) / max(best, 1e-9))


def _parts(m: Measures, best: Measures, weights: tuple[float, float, float, float], holds: bool) -> dict[str, float]:
    w_cost, w_ttft, w_tps, w_quality = weights
    return {
        "cost": w_cost * _doublings(m.cost, best.cost),
        "ttft": w_ttft * _doublings(m.ttft_ms, best.ttft_ms),
        "tps": w_tps * _doublings(best.tps, m.tps),
        "quality": w_quality * QUALITY_SCALE * (best.quality - m.quality),
        "reliability": RELIABILITY_WEIGHT * (m.unreliability - best.unreliability),
        "flags": m.penalty,
        "affinity": -AFFINITY_BONUS * m.cache_hit if holds else 0.0,
    }


def _best(measures: list[Measures]) -> Measures:
    return Measures(
        cost=min(m.cost for m in measures),
        ttft_ms=min(m.ttft_ms for m in measures),
        tps=max(m.tps for m in measures),
        quality=max(m.quality for m in measures),
        unreliability=min(m.unreliability for m in measures),
        penalty=0.0,
        cache_hit=0.0,
        last_resort=False,
    )


class DefaultScorer:
    """Lower score is better; integrity-flagged candidates only after every other."""

    def scored(self, signals: list[Signals], *, mode: str, sort: str | None, affinity: int | None) -> list[Scored]:
        if not signals:
            return []
        measures = [measure(s) for s in signals]
        best = _best(measures)
        weights = MODE_WEIGHTS.get(mode, MODE_WEIGHTS["balanced"])
        out = []
        for s, m in zip(signals, measures, strict=True):
            parts = _parts(m, best, weights, s.offering.offering_id == affinity)
            out.append(Scored(s, sum(parts.values()), parts, m.last_resort))
        if sort is not None:
            key = _SORT_KEYS[sort]
            return [x for _, x in sorted(zip(measures, out, strict=True), key=lambda p: (p[0].last_resort, key(p[0])))]
        return sorted(out, key=lambda x: (x.last_resort, x.score))

    def rank(self, signals: list[Signals], *, mode: str, sort: str | None, affinity: int | None) -> list[Signals]:
        return [x.signals for x in self.scored(signals, mode=mode, sort=sort, affinity=affinity)]


_SORT_KEYS: dict[str, Callable[[Measures], float]] = {
    "price": lambda m: m.cost,
    "latency": lambda m: m.ttft_ms,
    "throughput": lambda m: -m.tps,
}
