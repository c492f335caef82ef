"""Injectable crash points for the crash-safety tests (a no-op unless the environment names one).

``TOKENWAY_CRASH_AT=<point>`` makes the process SIGKILL itself the
``TOKENWAY_CRASH_AFTER``-th time (default 1) it passes that point, so tests can
prove that no usage is lost or billed twice whatever the moment of death.
"""

from __future__ import annotations

import os
import signal

from contracts.env import env_int, env_str

POINTS = ("after_receipt", "mid_batch", "after_ledger", "during_stripe_push", "after_stripe_2xx")

_CRASH_AT = env_str("TOKENWAY_CRASH_AT")
_remaining = env_int("TOKENWAY_CRASH_AFTER", 1)


def crash_point(name: str) -> None:
    global _remaining
    if name != _CRASH_AT:
        return
    _remaining -= 1
    if _remaining <= 0:
        os.kill(os.getpid(), signal.SIGKILL)
