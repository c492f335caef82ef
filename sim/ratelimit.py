"""Declared RPM/TPM enforced per offering in fixed one-minute windows of real time.

Windows do not follow --time-scale: a test that wants a fresh window calls /_sim/reset or
/_sim/limits (both clear the windows) instead of waiting."""

from __future__ import annotations

from dataclasses import dataclass

WINDOW_S = 60.0


@dataclass(slots=True)
class Admission:
    allowed: bool
    limit_requests: int | None
    remaining_requests: int | None
    limit_tokens: int | None
    remaining_tokens: int | None
    reset_s: float  # sim seconds until the window resets
    exceeded: str = ""  # "requests" | "tokens" when refused


class RateWindow:
    __slots__ = ("requests", "start", "tokens")

    def __init__(self, start: float) -> None:
        self.start = start
        self.requests = 0
        self.tokens = 0


class RateLimiter:
    def __init__(self) -> None:
        self._windows: dict[str, RateWindow] = {}

    def clear(self) -> None:
        self._windows.clear()

    def admit(self, key: str, *, rpm: int | None, tpm: int | None, tokens: int, now: float) -> Admission:
        start = now - now % WINDOW_S
        window = self._windows.get(key)
        if window is None or window.start != start:
            window = self._windows[key] = RateWindow(start)
        reset = start + WINDOW_S - now
        if rpm is not None and window.requests + 1 > rpm:
            return Admission(False, rpm, 0, tpm, _left(tpm, window.tokens), reset, "requests")
        if tpm is not None and window.tokens + tokens > tpm:
            return Admission(False, rpm, _left(rpm, window.requests), tpm, _left(tpm, window.tokens), reset, "tokens")
        window.requests += 1
        window.tokens += tokens
        return Admission(True, rpm, _left(rpm, window.requests), tpm, _left(tpm, window.tokens), reset)


def _left(limit: int | None, used: int) -> int | None:
    return None if limit is None else max(0, limit - used)
