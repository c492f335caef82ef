"""The chaos suite's stack: the real ``make run`` tree (tests/deployed's fixture code), calm providers.

The simulated providers run without their random faults and incidents (those are upstream
failures, not ours) and faster than real time, so every 5xx the suite sees is the platform's own.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deployed.conftest import Stack, running_stack
from tests.reliability.faults import postgres_stop_if_running
from tests.reliability.report import start_table
from tests.routing.conftest import calm_profiles

SIM_TIME_SCALE = "0.002"  # a 700 ms TTFT takes 1.4 ms: the fuzzer's 5,000 cases fit in a minute or two
REGIONS = "beijing,shanghai"  # two probe workers are enough to kill one; fewer processes start faster


@pytest.fixture(scope="package")
def chaos() -> Iterator[Stack]:
    folder = Path(tempfile.mkdtemp(prefix="tokenway-chaos-sim-"))
    env = {"SIM_PROFILES": str(calm_profiles(folder)), "SIM_TIME_SCALE": SIM_TIME_SCALE, "TOKENWAY_REGIONS": REGIONS}
    start_table()
    try:
        with running_stack(
            "reliability", extra_env=env, tracebacks_allowed=True, after_stop=postgres_stop_if_running
        ) as stack:
            yield stack
    finally:
        shutil.rmtree(folder, ignore_errors=True)
