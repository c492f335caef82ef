"""Per-offering live health in this process: circuit breaker, Retry-After cooldown, EWMAs.

Breaker: ``closed`` → after N consecutive failures ``open`` for a cooldown → one
``half-open`` trial request; its success closes the breaker (and restarts the latency EWMA from it),
its failure re-opens it. The forwarder gives a trial a shorter first-byte deadline
(routing.failover.deadline), so one that is still slow fails too.
EWMAs fade with time (routing.failover.live) and are shared across processes (routing.failover.shared).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from routing.failover import live as signals
from routing.failover.live import QUIET, Live, Pending, fade

EWMA_ALPHA = 0.2  # weight of the newest observation


@dataclass(slots=True)
class OfferingHealth:
    consecutive_failures: int = 0
    open_until: float = 0.0  # breaker open (or Retry-After cooldown) until this monotonic time
    trial_in_flight: bool = False
    throttled: bool = False  # the last failure was a rate limit (429): a cooldown now is the provider's rate limit
    latency_ms: float | None = None  # EWMA of time to first byte
    error_rate: float = 0.0  # EWMA of failures (0..1)
    throttle_rate: float = 0.0  # EWMA of 429s (0..1)
    updated_at: float = 0.0  # clock time of the error/429 EWMAs (they fade from there)
    latency_at: float = 0.0  # clock time of the latency EWMA
    recovered_at: float = 0.0  # clock time a half-open trial succeeded; 0 once anything fails again
    opened_at: float = 0.0  # clock time the breaker (or a Retry-After cooldown) last opened from closed
    pending: Pending = field(default_factory=Pending)  # not yet shared (routing.failover.shared)


class HealthBoard:
    def __init__(
        self, *, failures_to_open: int, cooldown_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._failures_to_open = failures_to_open
        self._cooldown_s = cooldown_s
        self._clock = clock  # a seam: tests move time by hand instead of sleeping through a cooldown
        self._by_offering: dict[int, OfferingHealth] = {}
        self._opened: set[int] = set()  # breakers opened since the last drain_opened (evaluation re-probes them)

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
        return self._clock() >= health.open_until and not health.trial_in_flight

    def rate_limited_for(self, offering_id: int) -> float | None:
        """Seconds until an offering cooling down for a rate limit (its last failure a 429) has room
        again; None when it is not cooling down, or cools down for another failure."""
        health = self._by_offering.get(offering_id)
        if health is None or not health.throttled or self.available(offering_id):
            return None
        return max(0.0, health.open_until - self._clock())

    def now(self) -> float:
        return self._clock()

    def set_clock(self, clock: Callable[[], float]) -> None:
        """Test seam on a running gateway: move time instead of sleeping through a fade or a cooldown."""
        self._clock = clock

    def items(self) -> list[tuple[int, OfferingHealth]]:
        """Every offering seen so far with its state (metrics read it when scraped)."""
        return list(self._by_offering.items())

    def live(self, offering_id: int) -> Live:
        """The faded live view the scorer reads (no allocation for an offering never seen)."""
        health = self._by_offering.get(offering_id)
        if health is None:
            return QUIET
        now = self._clock()
        age = now - health.updated_at
        return Live(
            error_rate=fade(health.error_rate, age, signals.ERROR_HALF_LIFE_S),
            throttle_rate=fade(health.throttle_rate, age, signals.ERROR_HALF_LIFE_S),
            latency_ms=health.latency_ms,
            latency_weight=fade(signals.LIVE_LATENCY_WEIGHT, now - health.latency_at, signals.LATENCY_HALF_LIFE_S),
            half_open=bool(health.open_until) and now >= health.open_until and not health.trial_in_flight,
            recovered=bool(health.recovered_at) and now - health.recovered_at < signals.RECOVERY_TRUST_S,
        )

    def _fade(self, health: OfferingHealth) -> None:
        now = self._clock()
        health.error_rate = fade(health.error_rate, now - health.updated_at, signals.ERROR_HALF_LIFE_S)
        health.throttle_rate = fade(health.throttle_rate, now - health.updated_at, signals.ERROR_HALF_LIFE_S)
        health.updated_at = now

    def drain_opened(self) -> set[int]:
        opened, self._opened = self._opened, set()
        return opened

    def drain_pending(self) -> dict[int, Pending]:
        out = {}
        for offering_id, health in self._by_offering.items():
            if health.pending.ok or health.pending.failed:
                out[offering_id], health.pending = health.pending, Pending()
        return out

    def restore_pending(self, pending: dict[int, Pending]) -> None:
        for offering_id, observed in pending.items():
            mine = self.get(offering_id).pending
            mine.ok, mine.failed = mine.ok + observed.ok, mine.failed + observed.failed
            mine.throttled, mine.ttft_sum_ms = (
                mine.throttled + observed.throttled,
                mine.ttft_sum_ms + observed.ttft_sum_ms,
            )
            if not mine.failed:  # nothing failed since: the recovery still stands
                mine.recovered_at = mine.recovered_at or observed.recovered_at

    def absorb(self, shared: dict[int, dict[str, float]]) -> None:
        """Take the merged EWMAs of all processes (ours included) as this process's view."""
        for offering_id, values in shared.items():
            health = self.get(offering_id)
            health.error_rate, health.throttle_rate = values.get("e", 0.0), values.get("r", 0.0)
            health.updated_at = values.get("t", health.updated_at)
            if "l" in values:
                health.latency_ms, health.latency_at = values["l"], health.updated_at
            if "k" in values:
                health.recovered_at = values["k"]

    def begin(self, offering_id: int) -> bool:
        """An attempt starts; True when it is a half-open breaker's trial."""
        health = self.get(offering_id)
        if health.open_until and self._clock() >= health.open_until:
            health.trial_in_flight = True
            return True
        return False

    def not_reached(self, offering_id: int) -> None:
        """The attempt never reached the provider (our own pool limit): no signal; a half-open trial is given back."""
        health = self._by_offering.get(offering_id)
        if health is not None:
            health.trial_in_flight = False

    def success(self, offering_id: int, ttfb_ms: float) -> None:
        health = self.get(offering_id)
        if health.open_until and self._clock() - ttfb_ms / 1000 < health.opened_at:
            # Race: an attempt sent before the breaker opened answers after the failures that opened it. It
            # is no trial and says nothing about the offering since: the breaker waits for its own trial.
            return
        trial = bool(health.open_until) and not health.throttled
        if trial:  # the trial after an open breaker: it works again, as fast as this
            health.recovered_at = health.pending.recovered_at = self._clock()
        health.consecutive_failures = 0
        health.open_until = 0.0
        health.trial_in_flight = False
        health.throttled = False
        self._fade(health)
        health.error_rate *= 1 - EWMA_ALPHA
        health.throttle_rate *= 1 - EWMA_ALPHA
        # A successful trial restarts the latency EWMA: what it held was measured during the fault.
        health.latency_ms = (
            ttfb_ms
            if health.latency_ms is None or trial
            else health.latency_ms + EWMA_ALPHA * (ttfb_ms - health.latency_ms)
        )
        health.latency_at = health.updated_at
        health.pending.ok += 1
        health.pending.ttft_sum_ms += ttfb_ms

    def failure(self, offering_id: int, *, retry_after: float | None = None, throttled: bool = False) -> None:
        health = self.get(offering_id)
        health.consecutive_failures += 1
        health.trial_in_flight = False
        health.throttled = throttled
        self._fade(health)
        health.error_rate += EWMA_ALPHA * (1 - health.error_rate)
        health.throttle_rate += EWMA_ALPHA * ((1.0 if throttled else 0.0) - health.throttle_rate)
        health.pending.failed += 1
        health.pending.throttled += int(throttled)
        health.recovered_at = health.pending.recovered_at = 0.0
        now = self._clock()
        if not health.open_until:
            health.opened_at = now  # opens now if this failure sets a cooldown below (else unused)
        if retry_after is not None:
            health.open_until = max(health.open_until, now + retry_after)
        if health.consecutive_failures >= self._failures_to_open:
            if health.consecutive_failures == self._failures_to_open and not throttled:
                self._opened.add(offering_id)  # the breaker opens: evaluation is asked for fresh probes
            health.open_until = max(health.open_until, now + self._cooldown_s)

    def reset(self) -> None:
        self._by_offering.clear()
        self._opened.clear()
