"""Live signals that fade with time: an offering's error, 429 and latency EWMAs lose weight while
it gets no traffic, so a penalty earned in a fault is gone a minute after the fault (docs/routing.md).
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR_HALF_LIFE_S = 15.0  # error and 429 EWMAs halve every 15 s without news: 1/16 left after a minute
LATENCY_HALF_LIFE_S = 60.0  # the live TTFT's weight against evaluation's figure halves every minute
LIVE_LATENCY_WEIGHT = 0.5  # weight of a fresh live TTFT EWMA against the snapshot's estimate
# After a half-open trial succeeds (and while nothing fails since), evaluation's error and availability
# evidence is older than what the gateway has just seen: it stops deciding for this long, the span of
# evaluation's freshest window (15 minutes), after which that window no longer holds the fault.
RECOVERY_TRUST_S = 900.0


def fade(value: float, age_s: float, half_life_s: float) -> float:
    return float(value * 0.5 ** (max(age_s, 0.0) / half_life_s))


@dataclass(frozen=True, slots=True)
class Live:
    """One offering's live view at one instant (what the scorer reads)."""

    error_rate: float = 0.0  # faded EWMA of failures, 0..1
    throttle_rate: float = 0.0  # faded EWMA of 429s, 0..1
    latency_ms: float | None = None  # EWMA of time to first byte
    latency_weight: float = 0.0  # LIVE_LATENCY_WEIGHT faded by the EWMA's age
    half_open: bool = False  # breaker past its cooldown: the next request is its trial
    recovered: bool = False  # a trial succeeded after the breaker opened, nothing failed since (RECOVERY_TRUST_S)

    def blend_ttft(self, static_ms: float) -> float:
        if self.latency_ms is None or self.latency_weight <= 0.0:
            return static_ms
        return (1 - self.latency_weight) * static_ms + self.latency_weight * self.latency_ms


QUIET = Live()


@dataclass(slots=True)
class Pending:
    """Observations of this process not yet merged into the shared copy in Redis."""

    ok: int = 0
    failed: int = 0
    throttled: int = 0
    ttft_sum_ms: float = 0.0
    recovered_at: float = 0.0  # clock time of a successful trial after an open breaker (0: none)

    def args(self, offering_id: int) -> list[str]:
        mean = self.ttft_sum_ms / self.ok if self.ok else -1.0
        fields = [str(offering_id), str(self.ok), str(self.failed), str(self.throttled), f"{mean:.3f}"]
        return [*fields, f"{self.recovered_at:.3f}"]
