"""Wait on a condition instead of sleeping a fixed time; a clock a test moves by hand.

A fixed sleep is either too short on a slow machine (a flaky test) or too long everywhere
(a slow suite). ``wait_until`` polls the condition every ``interval`` seconds and returns as soon
as it holds; when it does not hold within ``timeout`` it fails with ``message``. When the time
itself is the behaviour under test (a cooldown, a window), give the code a clock seam and move
a ``ManualClock``.

Sleeps left in the tests on purpose, where the sleep is the behaviour: a slow or hanging upstream or app
(tests/evaluation/upstream.py, tests/platform/test_asgi.py), a long-running child process
(tests/platform/test_supervisor.py), an outage or a fault held for a set time and the load's pacing
(tests/reliability/). Two still wait a fixed time to see that nothing more happens (one more spool
replay round in tests/routing/test_redis_outage.py, no second usage event in
tests/routing/test_first_byte_failover.py), and tests/routing/test_spool.py waits out the Redis
client's fail-fast window: each needs a seam in the gateway (a replay-round counter, a clock for the
client) to wait on instead. `devtools/conventions.toml` lists each place with its reason; `make lint`
fails on a fixed sleep anywhere else.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

INTERVAL_S = 0.02  # short enough to add little to a test, long enough not to spin a core


def poll_until(predicate: Callable[[], T], *, timeout: float, interval: float = INTERVAL_S) -> T:
    """Poll ``predicate`` until it returns a truthy value or ``timeout`` passes; return its last value
    (falsy on timeout: for callers that report what they found rather than fail)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def wait_until(predicate: Callable[[], T], *, timeout: float, message: str, interval: float = INTERVAL_S) -> T:
    """Poll ``predicate`` until it returns a truthy value, and return that value."""
    value = poll_until(predicate, timeout=timeout, interval=interval)
    if not value:
        raise AssertionError(f"not within {timeout:g}s: {message}")
    return value


class ManualClock:
    """A monotonic clock that moves only when the test says so (``clock=ManualClock()`` where code takes one)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
