"""kill -9 of each process kind under load: the supervisor restarts it; no 5xx, no lost or double-billed usage."""

from __future__ import annotations

import time

import pytest

from tests.deployed.conftest import Stack
from tests.reliability.faults import kill_9, stack_urls, wait_restarted
from tests.reliability.ledger import lost_and_double_billed, lost_detail
from tests.reliability.load import Load
from tests.reliability.report import report

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.reliability, pytest.mark.timeout(300)]

RATE = 25  # requests per second
SECONDS = 14
FAULT_AT_S = 4
WEB_RECOVERY_S = 20  # the supervisor's 1 s backoff, then Django and the gateway starting


@pytest.mark.parametrize("name", ["web", "metering", "worker", "beat", "probe-beijing"])
def test_kill_9_is_restarted_and_no_usage_is_lost(chaos: Stack, name: str) -> None:
    with Load(chaos.base_url, chaos.key, rate=RATE, seconds=SECONDS) as load:
        time.sleep(FAULT_AT_S)
        killed_at = time.monotonic()
        old_pid = kill_9(chaos, name)
        restarted_s = wait_restarted(chaos, name, old_pid)
    result = load.result
    db_url = stack_urls(chaos)["DATABASE_URL"]
    lost, double, _ = lost_and_double_billed(db_url, result.ok_ids())
    recover_s = result.first_ok_after(killed_at) if name == "web" else restarted_s
    report(f"kill -9 {name}", result, lost=lost, double=double, recover_s=recover_s)
    assert result.server_errors == [], result.server_errors[:5]
    assert lost == 0, lost_detail(chaos, db_url, result.ok_ids())
    assert double == 0
    if name == "web":  # the only process holding client connections: refused until it is back
        assert recover_s is not None and recover_s < WEB_RECOVERY_S
    else:
        assert len(result.ok_ids()) == result.sent  # the gateway did not notice
