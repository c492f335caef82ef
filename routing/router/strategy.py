"""Ordering strategies. A strategy scores candidates for a route mode; the default scorer blends
the per-snapshot estimates (routing.state.estimates) with this request's size and live signals.

Score (lower is better), a sum of named parts, each relative to the best candidate so units cancel:
  cost        w_cost    · log2(expected cost / cheapest)
  ttft        w_ttft    · log2(predicted TTFT / fastest)
  tps         w_tps     · log2(fastest throughput / throughput)
  quality     w_quality · 10 · (best quality − quality)
  reliability 3 · (unreliability − least unreliable)  (evaluation's bound + live errors + ½ live 429s)
  flags       flag, incident and status penalties
  affinity    −0.6 · expected cache hit, for the offering that holds this conversation's prefix
  load        up to 3 when the forecast load nears what is left of its rate limit (routing.limits.board)
Candidates with an integrity flag come after all others whatever their score. docs/routing.md.
While a breaker is half-open (so its trial request can happen at all) and after that trial succeeded
(live.recovered), evaluation's error record counts as the prior error share (2%), its open availability,
TTFT and throughput incidents add nothing and its TTFT and throughput are the hour's without the freshest
window's weight: live evidence is newer than the fault evaluation measured. A half-open trial is scored
without the live TTFT either (it holds the fault); a successful one restarts it (routing.failover.health).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from contracts.route_explain import PARTS
from contracts.snapshot import OfferingSnapshot, OfferingStats
from routing.failover.live import QUIET, Live
from routing.state.estimates import (
    RECOVERED_UNRELIABILITY,
    TTFT_REFERENCE_TOKENS,
    OfferingEstimate,
    estimate_solo,
)

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
    load_penalty: float = 0.0  # score units: forecast load near the offering's learned limit

    def resolved(self) -> OfferingEstimate:
        return self.estimate if self.estimate is not None else estimate_solo(self.offering, self.stats)


# (cost, ttft ms, tps, quality, unreliability, penalty, cache hit, last resort, load): a tuple, built
# per candidate per request, so no object overhead on the hot path.
Measures = tuple[float, float, float, float, float, float, float, bool, float]
COST, TTFT, TPS, QUALITY, UNRELIABILITY, PENALTY, CACHE_HIT, LAST_RESORT, LOAD = range(9)


def measure(s: Signals) -> Measures:
    est, live = s.resolved(), s.live or QUIET
    ttft, tps, unreliability, penalty = est.ttft_ms, est.tps, est.unreliability, est.flag_penalty
    if live.recovered or live.half_open:  # a half-open breaker's trial must be able to win to happen at all
        unreliability = min(unreliability, RECOVERED_UNRELIABILITY)
        penalty -= est.outage_penalty + est.latency_penalty
        ttft, tps = est.hour_ttft_ms, est.hour_tps
    static_ttft = ttft + est.prefill_ms_per_token * max(0, s.uncached_input - TTFT_REFERENCE_TOKENS)
    live_errors = 0.0 if live.half_open else live.error_rate + THROTTLE_SHARE * live.throttle_rate
    return (
        s.expected_cost,
        static_ttft if live.half_open else live.blend_ttft(static_ttft),
        tps,
        est.quality,
        unreliability + live_errors,
        penalty,
        est.cache_hit,
        est.last_resort,
        s.load_penalty,
    )


@dataclass(frozen=True, slots=True)
class Scored:
    signals: Signals
    score: float
    terms: tuple[float, ...] = ()  # weighted parts in contracts.route_explain.PARTS order
    last_resort: bool = False

    @property
    def parts(self) -> dict[str, float]:
        return dict(zip(PARTS, self.terms, strict=True))


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
AFFINITY = PARTS.index("affinity")
RELIABILITY_WEIGHT = 3.0  # an error share of 1/3 weighs one doubling

Logs = tuple[float, float, float]  # log2 of cost, ttft, tps
Best = tuple[float, float, float, float, float]  # best log cost, log ttft, log tps, quality, unreliability


def _log2(value: float) -> float:
    return math.log2(value if value > 1e-9 else 1e-9)


def _terms(m: Measures, logs: Logs, best: Best, weights: tuple[float, float, float, float]) -> tuple[float, ...]:
    """The weighted parts (PARTS order) without affinity, which only the prefix holder gets."""
    w_cost, w_ttft, w_tps, w_quality = weights
    return (
        w_cost * (logs[0] - best[0]),
        w_ttft * (logs[1] - best[1]),
        w_tps * (best[2] - logs[2]),
        w_quality * QUALITY_SCALE * (best[3] - m[QUALITY]),
        RELIABILITY_WEIGHT * (m[UNRELIABILITY] - best[4]),
        m[PENALTY],
        0.0,
        m[LOAD],
    )


def _best(measures: list[Measures], logs: list[Logs]) -> Best:
    return (
        min(x[0] for x in logs),
        min(x[1] for x in logs),
        max(x[2] for x in logs),
        max(m[QUALITY] for m in measures),
        min(m[UNRELIABILITY] for m in measures),
    )


class DefaultScorer:
    """Lower score is better; integrity-flagged candidates only after every other."""

    def scored(self, signals: list[Signals], *, mode: str, sort: str | None, affinity: int | None) -> list[Scored]:
        if not signals:
            return []
        measures = [measure(s) for s in signals]
        logs = [(_log2(m[COST]), _log2(m[TTFT]), _log2(m[TPS])) for m in measures]
        best = _best(measures, logs)
        weights = MODE_WEIGHTS.get(mode, MODE_WEIGHTS["balanced"])
        out = []
        for s, m, log in zip(signals, measures, logs, strict=True):
            terms = _terms(m, log, best, weights)
            if s.offering.offering_id == affinity:
                terms = (*terms[:AFFINITY], -AFFINITY_BONUS * m[CACHE_HIT], *terms[AFFINITY + 1 :])
            out.append(Scored(s, sum(terms), terms, bool(m[LAST_RESORT])))
        if sort is not None:
            key = _SORT_KEYS[sort]
            ordered = sorted(zip(measures, out, strict=True), key=lambda p: (p[0][LAST_RESORT], key(p[0])))
            return [x for _, x in ordered]
        return sorted(out, key=lambda x: (x.last_resort, x.score))

    def rank(self, signals: list[Signals], *, mode: str, sort: str | None, affinity: int | None) -> list[Signals]:
        return [x.signals for x in self.scored(signals, mode=mode, sort=sort, affinity=affinity)]


_SORT_KEYS: dict[str, Callable[[Measures], float]] = {
    "price": lambda m: m[COST],
    "latency": lambda m: m[TTFT],
    "throughput": lambda m: -m[TPS],
}
