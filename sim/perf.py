"""Latency draws of one request: TTFT and output speed under drift and incidents."""

from __future__ import annotations

from dataclasses import dataclass

from sim.clock import SimClock
from sim.draws import Draws
from sim.profiles import Incident, Profile


@dataclass(slots=True)
class Timing:
    ttft_s: float  # sim seconds before the first token (queueing comes on top)
    tokens_per_s: float
    jitter: float

    def gap(self, tokens: int, draws: Draws) -> float:
        """Sim seconds between chunks carrying ``tokens`` output tokens."""
        base = tokens / self.tokens_per_s
        return base * max(0.05, 1.0 + self.jitter * draws.normal()) if self.jitter else base

    def generation_s(self, tokens: int) -> float:
        return tokens / self.tokens_per_s

    def as_dict(self) -> dict[str, float]:
        """Ground truth of one request (sim time, queueing excluded) for /_sim/requests."""
        return {"ttft_ms": self.ttft_s * 1000.0, "tokens_per_s": self.tokens_per_s, "jitter": self.jitter}


def active_incidents(profile: Profile, clock: SimClock) -> list[Incident]:
    if not profile.incidents:
        return []
    now = clock.now()
    minute = ((clock.wall() / 60.0) + profile.tz_offset_h * 60.0) % 1440
    return [incident for incident in profile.incidents if incident.active(now_s=now, minute_of_day=minute)]


def _factors(profile: Profile, clock: SimClock, incidents: list[Incident]) -> tuple[float, float]:
    """TTFT and tokens/s multipliers of the current hour's drift and the active incidents."""
    drift = profile.drift[clock.hour(profile.tz_offset_h)]
    ttft_factor, tps_factor = drift, 1.0 / drift
    for incident in incidents:
        ttft_factor *= incident.ttft_factor
        tps_factor *= incident.tps_factor
    return ttft_factor, tps_factor


def expected(profile: Profile, clock: SimClock) -> dict[str, float]:
    """Medians a request drawn now has: TTFT before prefill and queueing (sim ms), tokens/s.

    A request's TTFT is lognormal(ttft_ms, ttft_sigma) x factor + prefill_ms_per_1k per 1k
    uncached prompt tokens; its speed tokens_per_s x factor x max(0.2, 1 + jitter/2 N(0,1)),
    whose median is tokens_per_s x factor (the gap jitter averages out over a stream).
    """
    ttft_factor, tps_factor = _factors(profile, clock, active_incidents(profile, clock))
    return {"ttft_ms": profile.perf.ttft_ms * ttft_factor, "tokens_per_s": profile.perf.tokens_per_s * tps_factor}


def draw_timing(
    profile: Profile, clock: SimClock, draws: Draws, *, uncached_tokens: int, incidents: list[Incident]
) -> Timing:
    perf = profile.perf
    ttft_factor, tps_factor = _factors(profile, clock, incidents)
    ttft_ms = draws.lognormal(perf.ttft_ms, perf.ttft_sigma) * ttft_factor
    ttft_ms += perf.prefill_ms_per_1k * uncached_tokens / 1000.0
    tps = perf.tokens_per_s * tps_factor * max(0.2, 1.0 + perf.jitter * 0.5 * draws.normal())
    return Timing(ttft_s=ttft_ms / 1000.0, tokens_per_s=max(0.1, tps), jitter=perf.jitter)
