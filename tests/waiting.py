"""Wait on a condition instead of sleeping a fixed time; a clock a test moves by hand.

A fixed sleep is either too short on a slow machine (a flaky test) or too long everywhere
(a slow suite). ``wait_until`` polls the condition every ``interval`` seconds and returns as soon
as it holds; when it does not hold within ``timeout`` it fails with ``message``. When the time
itself is the behaviour under test (a cooldown, a window), give the code a clock seam and move
a ``ManualClock``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

INTERVAL_S = 0.02  # short enough to add little to a test, long enough not to spin a core


def wait_until(predicate: Callable[[], T], *, timeout: float, message: str, interval: float = INTERVAL_S) -> T:
    """Poll ``predicate`` until it returns a truthy value, and return that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"not within {timeout:g}s: {message}")
        time.sleep(interval)


class ManualClock:
    """A monotonic clock that moves only when the test says so (``clock=ManualClock()`` where code takes one)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
