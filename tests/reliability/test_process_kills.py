"""kill -9 of each process kind under load: the supervisor restarts it; no 5xx, no lost or double-billed usage."""

from __future__ import annotations

import time

import pytest

from tests.deployed.conftest import Stack
from tests.reliability.faults import kill_9, stack_urls, wait_restarted
from tests.reliability.ledger import lost_and_double_billed
from tests.reliability.load import Load
from tests.reliability.report import report

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.reliability, pytest.mark.timeout(300)]

RATE = 25  # requests per second
SECONDS = 14
FAULT_AT_S = 4


@pytest.mark.parametrize("name", ["web", "metering", "worker", "beat", "probe-beijing"])
def test_kill_9_is_restarted_and_no_usage_is_lost(chaos: Stack, name: str) -> None:
    with Load(chaos.base_url, chaos.key, rate=RATE, seconds=SECONDS) as load:
        time.sleep(FAULT_AT_S)
        killed_at = time.monotonic()
        old_pid = kill_9(chaos, name)
        restarted_s = wait_restarted(chaos, name, old_pid)
    result = load.result
    lost, double, _ = lost_and_double_billed(stack_urls(chaos)["DATABASE_URL"], result.ok_ids())
    recover_s = result.first_ok_after(killed_at) if name == "web" else restarted_s
    report(f"kill -9 {name}", result, lost=lost, double=double, recover_s=recover_s)
    assert result.server_errors == [], result.server_errors[:5]
    assert lost == 0 and double == 0
    assert len(result.ok_ids()) >= result.sent * 0.5  # the gateway kept answering (web: down while it restarts)
    if name != "web":
        assert result.no_answer == 0  # only the web process holds client connections
