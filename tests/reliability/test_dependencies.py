"""Redis crashes and comes back; PostgreSQL stops for 20 s: the gateway answers through both,
every 200 is billed exactly once after recovery."""

from __future__ import annotations

import time

import pytest

from tests.deployed.conftest import Stack
from tests.reliability.faults import postgres_start, postgres_stop, redis_crash, stack_urls
from tests.reliability.ledger import lost_and_double_billed
from tests.reliability.load import Load
from tests.reliability.report import report

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.reliability, pytest.mark.timeout(300)]

RATE = 25
REDIS_DOWN_MS = 5_000
POSTGRES_DOWN_S = 20


def test_redis_crash_answers_503_with_retry_after_then_recovers_with_no_lost_usage(chaos: Stack) -> None:
    with Load(chaos.base_url, chaos.key, rate=RATE, seconds=16) as load:
        time.sleep(4)
        crashed_at = time.monotonic()
        redis_crash(chaos, down_ms=REDIS_DOWN_MS)
    result = load.result
    lost, double, _ = lost_and_double_billed(stack_urls(chaos)["DATABASE_URL"], result.ok_ids())
    back_s = result.first_ok_after(crashed_at + REDIS_DOWN_MS / 1000)
    report(
        f"Redis crash, back after {REDIS_DOWN_MS / 1000:g} s",
        result,
        lost=lost,
        double=double,
        recover_s=None if back_s is None else back_s + REDIS_DOWN_MS / 1000,
    )
    assert [a for a in result.server_errors if not (a.status == 503 and a.retry_after)] == []
    assert result.unavailable_with_retry_after > 0  # the outage was seen, and answered as such
    assert result.no_answer == 0
    assert lost == 0 and double == 0
    assert back_s is not None and back_s < 5, "the gateway did not serve again within 5 s of Redis returning"


def test_postgres_stopped_20s_the_gateway_keeps_serving_and_usage_catches_up(chaos: Stack) -> None:
    db_url = stack_urls(chaos)["DATABASE_URL"]
    with Load(chaos.base_url, chaos.key, rate=RATE, seconds=POSTGRES_DOWN_S + 10) as load:
        time.sleep(4)
        options = postgres_stop(chaos)
        time.sleep(POSTGRES_DOWN_S)
        postgres_start(chaos, options)
        # Recovery: from PostgreSQL's return until everything answered during the outage is in the books.
        _, _, caught_up_s = lost_and_double_billed(db_url, load.result.ok_ids())
    result = load.result
    lost, double, _ = lost_and_double_billed(db_url, result.ok_ids())
    report(f"PostgreSQL stopped {POSTGRES_DOWN_S} s", result, lost=lost, double=double, recover_s=caught_up_s)
    assert result.server_errors == [], result.server_errors[:5]
    assert result.no_answer == 0
    assert len(result.ok_ids()) == result.sent  # Redis and in-memory snapshots carried every request
    assert lost == 0 and double == 0
