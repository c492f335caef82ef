"""The recovery suite's stack: one real ``make run`` tree of its own (tests/deployed/conftest.py starts it
on free ports with a throw-away data dir), in real time, since what the suite measures is how many real
seconds routing takes to come back to an offering after a fault. Its simulated providers are calm (no
random faults or incidents): the faults are the ones the test injects through the simulator's control API.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.deployed.conftest import Stack, shared_running_stack

REAL_TIME = "1"  # SIM_TIME_SCALE: a 700 ms TTFT takes 700 ms, a 4-minute fault four minutes


@pytest.fixture(scope="package")
def stack() -> Iterator[Stack]:
    with shared_running_stack("recovery", time_scale=REAL_TIME) as running:
        yield running
