"""Per-offering estimates from the catalog and the statistics snapshot, computed once per snapshot.

Each figure is the evaluation's measurement shrunk toward the model's prior by its sample count
(routing.state.priors), at the pessimistic end of its interval. Before anything is measured the
catalog's declared prices apply with a cautious prior: an offering cheaper than its model's median
gets no credit for that until price-truth probes confirm it, and a third-party offering is assumed
to bill up to RESELLER_TRUST more than it declares. Thresholds: docs/routing.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from contracts.snapshot import OfferingSnapshot, OfferingStats
from routing.state import priors as p

# Integrity flags: never preferred while any unflagged candidate remains (kept as a last resort).
INTEGRITY_FLAGS = frozenset({"price_mismatch", "token_overcount", "degraded_quality"})
# Score units added per flag (one unit ≈ one doubling of the mode's main term).
FLAG_PENALTY = {"price_mismatch": 4.0, "token_overcount": 4.0, "degraded_quality": 4.0, "capability_mismatch": 1.0}
INCIDENT_PENALTY = {"availability": 2.0, "ttft": 1.0, "tps": 0.5}  # open incidents "for the worse"
LATENCY_INCIDENTS = frozenset({"ttft", "tps"})
DEGRADED_STATUS_PENALTY = 1.5  # the catalog marks the offering degraded
REFERENCE_INPUT, REFERENCE_OUTPUT = 1000, 256  # the typical request a declared price is compared on
TTFT_REFERENCE_TOKENS = 1000  # evaluation's headline TTFT is measured on ~1k-token inputs
PER_TOKEN = 1e-6  # prices are per 1M tokens

StatsPair = tuple[OfferingStats | None, OfferingStats | None]  # (this region's, all regions')
# The gateway's own region's latency and errors are used once they rest on this many probes (about
# an hour of performance probes from that region); fewer: every region's. Regions differ by network
# distance (sim/network.py), so a region's own figures are the better forecast once they are enough.
REGIONAL_MIN_N = 10
# The hour's samples older than its freshest 15 minutes count this much each against a fresh one: a fault
# of twenty minutes ago weighs a quarter of what the last fifteen minutes show.
OLDER_WEIGHT = 0.25
# An open TTFT or throughput incident stops penalising once the freshest window's median is back within
# this factor of the hour's (evaluation closes it only after several samples near its old baseline).
BACK_TO_NORMAL = 1.2


def local_perf(pair: StatsPair) -> OfferingStats | None:
    """Latency and error figures for this gateway: its region's when enough, else all regions'."""
    regional, overall = pair
    if regional is not None and (regional.n >= REGIONAL_MIN_N or overall is None):
        return regional
    return overall


@dataclass(frozen=True, slots=True)
class OfferingEstimate:
    price_factor: float  # expected billed / declared (over-count × over-billing, shrunk)
    cache_hit: float  # expected share of input read from cache when this offering holds the prefix
    ttft_ms: float  # on a ~1k-token input
    prefill_ms_per_token: float  # extra TTFT per uncached input token beyond that
    tps: float
    quality: float  # 0..1: the model's prior scaled by the canaries' lower bound
    unreliability: float  # upper bound of the error share
    flag_penalty: float  # score units from flags, incidents and catalog status
    outage_penalty: float  # the part of flag_penalty an open availability incident adds
    last_resort: bool
    flags: tuple[str, ...]
    input_price: float  # micro-units per token
    cache_read_price: float
    cache_write_price: float
    output_price: float
    # What live evidence of a recovery (a half-open breaker, its successful trial) scores the offering on
    # instead (routing.router.strategy): the hour's median TTFT and throughput without the freshest window's
    # weight and the median's upper bound, which hold the fault the trial says is over, and the part of
    # flag_penalty its open TTFT and throughput incidents add.
    hour_ttft_ms: float
    hour_tps: float
    latency_penalty: float

    def request_cost(self, *, input_tokens: int, output_tokens: int, holds_prefix: bool) -> tuple[float, int]:
        """(expected micro-units, expected uncached input tokens) for one request. The offering that
        holds the conversation's prefix reads ``cache_hit`` of it; one with an explicit cache-write
        price writes that share instead."""
        cached = int(input_tokens * self.cache_hit)
        read, write = (cached, 0) if holds_prefix else (0, cached if self.cache_write_price else 0)
        uncached = input_tokens - read - write
        cost = (
            uncached * self.input_price
            + read * self.cache_read_price
            + write * self.cache_write_price
            + output_tokens * self.output_price
        )
        return cost * self.price_factor, uncached


def reference_cost(offering: OfferingSnapshot) -> float:
    return float(REFERENCE_INPUT * offering.prices.input + REFERENCE_OUTPUT * offering.prices.output)


def first_party(offering: OfferingSnapshot, author: str | None) -> bool:
    """The model's own vendor (``deepseek`` and ``deepseek-anthropic`` for a deepseek model).
    Without a known author nobody is singled out."""
    if not author:
        return True
    return offering.provider == author or offering.provider.startswith(author + "-")


@dataclass(frozen=True, slots=True)
class ModelPriors:
    median_reference_cost: float
    ttft_ms: float
    tps: float

    @classmethod
    def of(cls, offerings: Iterable[OfferingSnapshot], stats_of: Callable[[int], StatsPair]) -> ModelPriors:
        items = list(offerings)
        perf = [local_perf(stats_of(o.offering_id)) for o in items]
        measured = [s for s in perf if s is not None and s.n > 0]
        return cls(
            median_reference_cost=p.median([reference_cost(o) for o in items], 0.0),
            ttft_ms=p.median([s.ttft_p50_ms for s in measured if s.ttft_p50_ms], p.PRIOR_TTFT_MS),
            tps=p.median([s.tps_p50 for s in measured if s.tps_p50], p.PRIOR_TPS),
        )


def _price_factor(offering: OfferingSnapshot, truth: OfferingStats | None, priors: ModelPriors, trusted: bool) -> float:
    own = reference_cost(offering)
    credit = max(1.0, priors.median_reference_cost / own) if own > 0 else 1.0
    prior = credit * (1.0 if trusted else p.RESELLER_TRUST)
    if truth is None or not truth.price_n or (truth.overcount_factor is None and truth.billed_ratio is None):
        return prior
    measured = max(1.0, truth.overcount_factor or 1.0) * max(1.0, truth.billed_ratio or 1.0)
    return p.shrink(measured, prior, truth.price_n, p.K_PRICE)


def _cache_hit(offering: OfferingSnapshot, truth: OfferingStats | None, flags: set[str]) -> float:
    if offering.cache_policy == "none" or ("billing_block_breaks_cache" in flags and offering.keeps_billing_block):
        return 0.0
    if truth is None or truth.cache_hit_ratio is None:
        return p.PRIOR_CACHE_HIT
    measured = truth.cache_hit_lo if truth.cache_hit_lo is not None else truth.cache_hit_ratio
    return p.shrink(measured, p.PRIOR_CACHE_HIT, truth.cache_n or truth.n, p.K_CACHE)


def _quality(offering: OfferingSnapshot, truth: OfferingStats | None) -> float:
    share, n = (None, 0) if truth is None else (truth.quality_score, truth.quality_n)
    if share is not None and n == 0 and truth is not None:
        n = truth.n  # a snapshot from before quality_n: the probe count stands in
    bound = p.lower_share(share, p.PRIOR_CANARY_SHARE, n, p.K_QUALITY)
    return offering.quality * min(1.0, bound / p.PRIOR_CANARY_SHARE)


# What is left of evaluation's error record once live evidence (a half-open breaker, a successful
# trial) says the faults it holds are over: the prior error share, without the bound of a small sample
# (the live EWMA adds what the gateway sees now). routing.router.strategy.
RECOVERED_UNRELIABILITY = p.PRIOR_ERROR_RATE


def fresh_first(hour: float | None, n: int, recent: float | None, recent_n: int) -> tuple[float | None, float]:
    """(value, effective n) of an hour's figure with its freshest 15 minutes at full weight and the
    older samples at OLDER_WEIGHT each (a mean of the two parts; for medians, an approximation)."""
    if recent is None or recent_n <= 0:
        return hour, float(n)
    older = max(0, n - recent_n)
    if hour is None or older == 0:
        return recent, float(recent_n)
    weight = OLDER_WEIGHT * older
    return (recent_n * recent + weight * hour) / (recent_n + weight), recent_n + weight


def _unreliability(perf: OfferingStats | None) -> float:
    if perf is None:
        return p.upper_share(None, p.PRIOR_ERROR_RATE, 0, p.K_RELIABILITY)
    share = perf.error_rate
    if share is None and perf.availability is not None:
        share = 1 - perf.availability
    older = share
    if share is not None and perf.recent_error_rate is not None and perf.n > perf.recent_n:
        # the hour's older part alone (the hour's mean counts the recent samples too)
        older = max(0.0, (perf.n * share - perf.recent_n * perf.recent_error_rate) / (perf.n - perf.recent_n))
    share, n = fresh_first(older, perf.n, perf.recent_error_rate, perf.recent_n)
    return p.upper_share(share, p.PRIOR_ERROR_RATE, round(n), p.K_RELIABILITY)


def _live_incidents(perf: OfferingStats | None) -> tuple[str, ...]:
    """Open incidents the freshest window still shows (a TTFT or throughput one whose recent median is back
    near the hour's no longer counts)."""
    if perf is None:
        return ()

    def over(metric: str) -> bool:
        if metric == "ttft" and perf.recent_ttft_p50_ms and perf.ttft_p50_ms:
            return perf.recent_ttft_p50_ms > BACK_TO_NORMAL * perf.ttft_p50_ms
        if metric == "tps" and perf.recent_tps_p50 and perf.tps_p50:
            return perf.recent_tps_p50 * BACK_TO_NORMAL < perf.tps_p50
        return True

    return tuple(m for m in perf.incidents if over(m))


def _penalty(offering: OfferingSnapshot, flags: set[str], incidents: tuple[str, ...]) -> float:
    value = sum(FLAG_PENALTY.get(f, 0.0) for f in flags) + sum(INCIDENT_PENALTY.get(m, 0.0) for m in incidents)
    return value + (DEGRADED_STATUS_PENALTY if offering.status == "degraded" else 0.0)


def _perf(perf: OfferingStats | None, priors: ModelPriors, *, fresh: bool = True) -> tuple[float, float, float]:
    """(TTFT, prefill per token, tokens/s). ``fresh``: the freshest window weighed over the hour's older
    samples and the TTFT median's upper bound. Else the hour's medians alone: what live evidence of a
    recovery scores an offering on, since the freshest window and the upper bound of an hour that holds
    a fault's samples are the fault (the median is not while fewer than half of them are)."""
    if perf is None:
        return priors.ttft_ms, p.PRIOR_PREFILL_MS_PER_TOKEN, priors.tps
    recent_n = perf.recent_n if fresh else 0
    hour_ttft = (perf.ttft_p50_hi_ms or perf.ttft_p50_ms) if fresh else (perf.ttft_p50_ms or perf.ttft_p50_hi_ms)
    measured, n = fresh_first(hour_ttft, perf.n, perf.recent_ttft_p50_ms, recent_n)
    ttft = p.shrink(measured, priors.ttft_ms, round(n), p.K_PERF)
    prefill = p.PRIOR_PREFILL_MS_PER_TOKEN
    if perf.ttft_10k_p50_ms and perf.ttft_p50_ms:
        prefill = max(0.0, (perf.ttft_10k_p50_ms - perf.ttft_p50_ms) / (10_000 - TTFT_REFERENCE_TOKENS))
    tps, n = fresh_first(perf.tps_p50, perf.n, perf.recent_tps_p50, recent_n)
    return ttft, prefill, p.shrink(tps, priors.tps, round(n), p.K_PERF)


def estimate(offering: OfferingSnapshot, pair: StatsPair, priors: ModelPriors, *, trusted: bool) -> OfferingEstimate:
    regional, overall = pair
    perf, truth = local_perf(pair), overall or regional  # price truth and canaries are not regional
    flags = {f for s in (regional, overall) if s is not None for f in s.flags}
    incidents = _live_incidents(perf)
    ttft, prefill, tps = _perf(perf, priors)
    hour_ttft, _, hour_tps = _perf(perf, priors, fresh=False)
    prices = offering.prices
    return OfferingEstimate(
        price_factor=_price_factor(offering, truth, priors, trusted),
        cache_hit=_cache_hit(offering, truth, flags),
        ttft_ms=ttft,
        prefill_ms_per_token=prefill,
        tps=max(tps, 1.0),
        quality=_quality(offering, truth),
        unreliability=_unreliability(perf),
        flag_penalty=_penalty(offering, flags, incidents),
        outage_penalty=INCIDENT_PENALTY["availability"] if "availability" in incidents else 0.0,
        last_resort=bool(flags & INTEGRITY_FLAGS),
        flags=tuple(sorted(flags)) + tuple(f"incident:{m}" for m in incidents),
        input_price=prices.input * PER_TOKEN,
        cache_read_price=prices.cache_read * PER_TOKEN,
        cache_write_price=prices.cache_write_5m * PER_TOKEN,
        output_price=prices.output * PER_TOKEN,
        hour_ttft_ms=hour_ttft,
        hour_tps=max(hour_tps, 1.0),
        latency_penalty=sum(INCIDENT_PENALTY[m] for m in incidents if m in LATENCY_INCIDENTS),
    )


def estimate_solo(offering: OfferingSnapshot, stats: OfferingStats | None) -> OfferingEstimate:
    """Without the rest of the catalog (unit tests, a strategy handed bare signals)."""
    pair: StatsPair = (stats, None)
    return estimate(offering, pair, ModelPriors.of((offering,), lambda _: pair), trusted=True)


def estimate_catalog(
    by_model: dict[str, tuple[OfferingSnapshot, ...]], authors: dict[str, str], stats_of: Callable[[int], StatsPair]
) -> dict[int, OfferingEstimate]:
    """Every served offering's estimate: run when the catalog or the statistics change, not per request."""
    out: dict[int, OfferingEstimate] = {}
    for model, offerings in by_model.items():
        priors = ModelPriors.of(offerings, stats_of)
        author = authors.get(model)
        for offering in offerings:
            trusted = first_party(offering, author)
            out[offering.offering_id] = estimate(offering, stats_of(offering.offering_id), priors, trusted=trusted)
    return out
