"""Recovery in a minute, through the real gateway and the simulated fleet on a manual clock: an offering
that failed for four minutes, or was slow for four, gets back at least half its pre-fault share of
traffic within two minutes of recovering, although evaluation's hour-long figures still hold the fault."""

from __future__ import annotations

import time

import pytest
import requests

from contracts import redis_keys as rk
from contracts.snapshot import OfferingStats
from tests.routing.conftest import add_fault
from tests.routing.test_truth_routing import chat, fast, offering_id, publish_stats, slow
from tests.waiting import ManualClock, wait_until

MODEL = "deepseek-v3.2"
STEP_S = 15.0  # one request every 15 simulated seconds
FAULT_S = 240.0  # the fault lasts four minutes


def _served_by(gateway, tenant, clock, provider: str, seconds: float) -> list[bool]:
    """One request per STEP_S for ``seconds`` of the manual clock: whether ``provider`` answered each.
    Each waits for the periodic sync to share what it saw, as it would within a second in real time."""
    health, out = gateway.gateway.health, []
    for _ in range(int(seconds / STEP_S)):
        out.append(chat(gateway, tenant, MODEL).headers["x-tokenway-provider"] == provider)
        wait_until(
            lambda: all(not h.pending.ok and not h.pending.failed for _, h in health.items()),
            timeout=5,
            message="live signals shared",
        )
        clock.advance(STEP_S)
    return out


def _share(served: list[bool]) -> float:
    return sum(served) / len(served)


@pytest.fixture
def manual_clock(gateway):
    clock = ManualClock(time.time())
    gateway.gateway.health.set_clock(clock)
    yield clock
    gateway.gateway.health.set_clock(time.time)


def _baseline(gateway, redis_client) -> tuple[int, dict[str, OfferingStats]]:
    best = offering_id(gateway, MODEL, "deepseek")
    others = {str(o.offering_id): slow(o.offering_id) for o in gateway.gateway.catalog.by_model[MODEL]}
    return best, others


def test_an_offering_that_failed_for_four_minutes_is_back_within_two_minutes(
    gateway, sim, tenant, redis_client, manual_clock
):
    best, others = _baseline(gateway, redis_client)
    publish_stats(gateway, redis_client, {**others, str(best): fast(best)})
    before = _share(_served_by(gateway, tenant, manual_clock, "deepseek", 60))
    assert before == 1.0
    add_fault(sim, provider="deepseek", kind="http_503")
    during = _served_by(gateway, tenant, manual_clock, "deepseek", 60)
    # What evaluation publishes by now and keeps publishing for the rest of the hour: a quarter of its probes
    # of the last hour failed, an availability incident is open (routing.state.estimates: 0.76 + 2 units).
    failing = fast(best, n=60, error_rate=0.25, availability=0.75, incidents=("availability",))
    publish_stats(gateway, redis_client, {**others, str(best): failing})
    during += _served_by(gateway, tenant, manual_clock, "deepseek", FAULT_S - 60)
    assert not any(during)
    assert redis_client.sismember(rk.REPROBE_REQUESTS, str(best))  # evaluation was asked to probe it now
    requests.delete(f"{sim.base_url}/_sim/faults", timeout=5)  # the provider recovers
    first, second = (_served_by(gateway, tenant, manual_clock, "deepseek", 60) for _ in range(2))
    print(f"failure: share before {before:.2f}, minute 1 after {_share(first):.2f}, minute 2 {_share(second):.2f}")
    assert _share(second) >= 0.5 * before
    assert gateway.gateway.health.live(best).recovered


def test_an_offering_that_was_slow_for_four_minutes_is_back_within_two_minutes(
    gateway, sim, tenant, redis_client, manual_clock
):
    best, others = _baseline(gateway, redis_client)
    publish_stats(gateway, redis_client, {**others, str(best): fast(best)})
    before = _share(_served_by(gateway, tenant, manual_clock, "deepseek", 60))
    # Evaluation sees the slowdown: its TTFT incident opens, the freshest window holds the slow probes.
    slowed = fast(best, incidents=("ttft",), recent_n=10, recent_ttft_p50_ms=1800.0, recent_error_rate=0.0)
    publish_stats(gateway, redis_client, {**others, str(best): slowed})
    during = _served_by(gateway, tenant, manual_clock, "deepseek", FAULT_S)
    assert not any(during)
    # Recovered. A minute on, evaluation's re-probes show it fast again in the freshest window while
    # the incident is still open (it closes only when enough samples are back near the old baseline).
    _served_by(gateway, tenant, manual_clock, "deepseek", 60)
    fresh = fast(best, incidents=("ttft",), recent_n=14, recent_ttft_p50_ms=320.0, recent_error_rate=0.0)
    publish_stats(gateway, redis_client, {**others, str(best): fresh})
    second = _served_by(gateway, tenant, manual_clock, "deepseek", 60)
    print(f"slowdown: share before {before:.2f}, minute 2 after {_share(second):.2f}")
    assert _share(second) >= 0.5 * before
