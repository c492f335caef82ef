"""Simulated time: every configured duration is in sim seconds, real time = sim time x scale.

A scale of 0 means "zero latency": sleeps are skipped and sim time runs with real time
(so TTLs and rate-limit windows still work).
"""

from __future__ import annotations

import asyncio
import time

_EARLY_OK_S = 50e-6  # waking this close to a deadline counts as on time (no busy loop)


class SimClock:
    def __init__(self, *, time_scale: float = 1.0) -> None:
        if time_scale < 0:
            raise ValueError("time_scale must be >= 0")
        self.time_scale = time_scale
        self._rate = 1.0 / time_scale if time_scale > 0 else 1.0
        self._real_start = time.monotonic()
        self._wall_start = time.time()
        self._hour_offset_s = 0.0

    @property
    def zero(self) -> bool:
        return self.time_scale == 0

    def now(self) -> float:
        """Sim seconds since the fleet started."""
        return (time.monotonic() - self._real_start) * self._rate

    def real_now(self) -> float:
        """Real seconds since the fleet started (rate-limit windows run on real time)."""
        return time.monotonic() - self._real_start

    def wall(self) -> float:
        """Simulated wall clock (epoch seconds), used for daily drift and wall-clock incidents."""
        return self._wall_start + self.now() + self._hour_offset_s

    def hour(self, tz_offset_h: float) -> int:
        return int(((self.wall() / 3600.0) + tz_offset_h) % 24)

    def set_hour(self, hour: float, tz_offset_h: float) -> None:
        """Shift the simulated wall clock so that it is now ``hour`` in the provider's zone."""
        self._hour_offset_s = 0.0
        current = ((self.wall() / 3600.0) + tz_offset_h) % 24
        self._hour_offset_s = ((hour - current) % 24) * 3600.0

    def real(self, sim_seconds: float) -> float:
        return sim_seconds * self.time_scale

    async def sleep(self, sim_seconds: float) -> None:
        if sim_seconds > 0 and self.time_scale > 0:
            await asyncio.sleep(sim_seconds * self.time_scale)

    @staticmethod
    def stamp() -> float:
        """Real monotonic seconds: the time base of ``sleep_until`` deadlines."""
        return time.monotonic()

    async def sleep_until(self, deadline: float) -> None:
        """Sleep to a real ``stamp()`` deadline.

        Pacing against absolute deadlines keeps timer overshoot (up to ~1 ms with uvloop's
        millisecond timers) from adding up over a stream's chunks; the loop re-checks
        because a loop's cached clock can fire a timer slightly early.
        """
        if self.zero:
            return
        while (left := deadline - time.monotonic()) > _EARLY_OK_S:
            await asyncio.sleep(left)
