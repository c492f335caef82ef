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


def draw_timing(
    profile: Profile, clock: SimClock, draws: Draws, *, uncached_tokens: int, incidents: list[Incident]
) -> Timing:
    perf = profile.perf
    drift = profile.drift[clock.hour(profile.tz_offset_h)]
    ttft_factor = drift
    tps_factor = 1.0 / drift
    for incident in incidents:
        ttft_factor *= incident.ttft_factor
        tps_factor *= incident.tps_factor
    ttft_ms = draws.lognormal(perf.ttft_ms, perf.ttft_sigma) * ttft_factor
    ttft_ms += perf.prefill_ms_per_1k * uncached_tokens / 1000.0
    tps = perf.tokens_per_s * tps_factor * max(0.2, 1.0 + perf.jitter * 0.5 * draws.normal())
    return Timing(ttft_s=ttft_ms / 1000.0, tokens_per_s=max(0.1, tps), jitter=perf.jitter)
