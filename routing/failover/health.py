"""Per-offering live health in this process: circuit breaker, Retry-After cooldown, EWMAs.

Breaker: ``closed`` → after N consecutive failures ``open`` for a cooldown → one
``half-open`` trial request; its success closes the breaker, its failure re-opens it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

EWMA_ALPHA = 0.2  # weight of the newest observation


@dataclass(slots=True)
class OfferingHealth:
    consecutive_failures: int = 0
    open_until: float = 0.0  # breaker open (or Retry-After cooldown) until this monotonic time
    trial_in_flight: bool = False
    latency_ms: float | None = None  # EWMA of time to first byte
    error_rate: float = 0.0  # EWMA of failures (0..1)


class HealthBoard:
    def __init__(self, *, failures_to_open: int, cooldown_s: float) -> None:
        self._failures_to_open = failures_to_open
        self._cooldown_s = cooldown_s
        self._by_offering: dict[int, OfferingHealth] = {}

    def get(self, offering_id: int) -> OfferingHealth:
        health = self._by_offering.get(offering_id)
        if health is None:
            health = self._by_offering[offering_id] = OfferingHealth()
        return health

    def available(self, offering_id: int) -> bool:
        """Closed, or open but past its cooldown with no trial running (half-open)."""
        health = self._by_offering.get(offering_id)
        if health is None or health.open_until == 0.0:
            return True
        return time.monotonic() >= health.open_until and not health.trial_in_flight

    def begin(self, offering_id: int) -> None:
        health = self.get(offering_id)
        if health.open_until and time.monotonic() >= health.open_until:
            health.trial_in_flight = True

    def success(self, offering_id: int, ttfb_ms: float) -> None:
        health = self.get(offering_id)
        health.consecutive_failures = 0
        health.open_until = 0.0
        health.trial_in_flight = False
        health.error_rate *= 1 - EWMA_ALPHA
        health.latency_ms = (
            ttfb_ms if health.latency_ms is None else health.latency_ms + EWMA_ALPHA * (ttfb_ms - health.latency_ms)
        )

    def failure(self, offering_id: int, *, retry_after: float | None = None) -> None:
        health = self.get(offering_id)
        health.consecutive_failures += 1
        health.trial_in_flight = False
        health.error_rate += EWMA_ALPHA * (1 - health.error_rate)
        now = time.monotonic()
        if retry_after is not None:
            health.open_until = max(health.open_until, now + retry_after)
        if health.consecutive_failures >= self._failures_to_open:
            health.open_until = max(health.open_until, now + self._cooldown_s)

    def reset(self) -> None:
        self._by_offering.clear()
