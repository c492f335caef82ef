"""The chaos suite's stack: the run's one ``make run`` tree (``shared_stack``, tests/deployed/conftest.py),
after the as-deployed suite has walked it; its simulated providers are calm, so every 5xx the suite sees
is the platform's own.

Each fault leaves the tree serving again (a killed process is restarted by the supervisor, Redis comes
back with its append-only file, PostgreSQL is started again), and every test waits for that recovery.
"""

from __future__ import annotations

import pytest

from tests.deployed.conftest import Stack
from tests.reliability.faults import postgres_stop_if_running
from tests.reliability.report import start_table


@pytest.fixture(scope="package")
def chaos(shared_stack: Stack) -> Stack:
    if shared_stack.faults_from is None:
        shared_stack.faults_from = len(shared_stack.output())
    shared_stack.after_stop = postgres_stop_if_running
    start_table()
    return shared_stack
