"""Recovery in real time on a running ``make run`` tree (issue 25): steady traffic on two models, each with
at least two offerings; after a baseline minute the preferred offering of one fails for four minutes (5xx and
dropped connections) while the preferred offering of the other is six times slower for four minutes; then
both recover. Each must be back to at least half its pre-fault share of its model's traffic within two minutes
of recovering (the gateway's own generation records name the offering that served each request), and no
latency incident of the slowed offering may close while it is still slow.

The stack gets a day of probe history first (tests/recovery/history.py): incidents are judged against a
24-hour baseline and the router reads the hour, as on a deployment that has been up for a day.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from typing import Any

import pytest
import requests

from contracts.snapshot import OfferingSnapshot
from routing.state.estimates import REGIONAL_MIN_N
from tests.deployed.conftest import REGIONS, ROOT, Stack
from tests.recovery.history import seed_history
from tests.recovery.observe import Watch, catalog, generations, incidents, stack_redis, stats
from tests.recovery.report import BACK_WITHIN_S, BASELINE_S, WINDOW_S, report
from tests.reliability.load import Load
from tests.waiting import poll_until, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.recovery, pytest.mark.timeout(1800)]

FAILING_MODEL, SLOW_MODEL = "gpt-4.1", "qwen3-max"  # two offerings each; the faults name the model
RATE = 3.0  # requests per second per model
FAULT_S, AFTER_S = 240.0, 150.0
PICK_S = 20.0  # at most this long after the baseline to read which offering each model prefers
SLOWER = 6.0
READY_S = 300.0  # integrity probes of a fresh stack, then a statistics refresh with the history in it
RECORDS_S = 120.0  # every answered request's generation record, once metering has ingested it
LATENCY_METRICS = ("ttft", "tps")
GATEWAY_REGION = REGIONS.split(",")[0]  # the web process's TOKENWAY_REGION (tokenway/settings.py)


def _body(model: str) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8}


def _sim(stack: Stack, path: str, rule: dict[str, Any]) -> None:
    response = requests.post(f"http://127.0.0.1:{stack.sim_port}/_sim/{path}", json=rule, timeout=10)
    assert response.status_code == 201, response.text


def _ready(stack: Stack, offerings: list[OfferingSnapshot]) -> bool:
    """Every offering under test routable (its integrity probes ran) and measured in the gateway's region."""
    client = stack_redis(stack)
    try:
        routable = {o.offering_id for o in catalog(client).offerings if not o.integrity_pending}
        snapshot = stats(client)
    finally:
        client.close()
    figures = {} if snapshot is None else snapshot.stats.get(GATEWAY_REGION, {})
    measured = {int(oid) for oid, s in figures.items() if s.n >= REGIONAL_MIN_N}
    return all(o.offering_id in routable and o.offering_id in measured for o in offerings)


def _preferred(stack: Stack, model: str, since: str) -> int:
    """The offering that served most of the model's requests so far (its generation records)."""

    def enough() -> dict[str, dict[str, Any]]:
        found = generations(stack, model, since)
        return found if len(found) >= 20 else {}

    records = wait_until(enough, timeout=PICK_S, message=f"generation records of {model}")
    counts: dict[int, int] = {}
    for record in records.values():
        if record["http_status"] == 200:
            counts[record["offering_id"]] = counts.get(record["offering_id"], 0) + 1
    return max(counts, key=lambda oid: counts[oid])


def _records(stack: Stack, load: Load, model: str, since: str) -> dict[str, dict[str, Any]]:
    """request id -> generation record of every answered request (waits for metering to ingest them)."""
    answered = {a.request_id for a in load.result.answers if a.status == 200 and a.request_id}
    found: dict[str, dict[str, Any]] = {}

    def complete() -> bool:
        found.update(generations(stack, model, since))
        return answered <= found.keys()

    poll_until(complete, timeout=RECORDS_S, interval=2)
    missing = answered - found.keys()
    assert len(missing) <= 0.01 * len(answered), (
        f"{len(missing)} of {len(answered)} answered {model} requests unrecorded"
    )
    return found


def _inject(stack: Stack, failing: OfferingSnapshot, slow: OfferingSnapshot) -> None:
    """Both faults end by themselves after FAULT_S (the simulator runs in real time)."""
    for kind, rate in (("http_503", 0.5), ("connection_reset", 1.0)):  # half 503s, the other half dropped
        rule = {"provider": failing.provider, "model": failing.model, "kind": kind, "rate": rate, "duration_s": FAULT_S}
        _sim(stack, "faults", rule)
    slowdown = {"ttft_factor": SLOWER, "tps_factor": 1 / SLOWER, "duration_s": FAULT_S}
    _sim(stack, "incidents", {"provider": slow.provider, "model": slow.model, **slowdown})


def test_a_failed_and_a_slowed_offering_each_get_their_traffic_back_within_two_minutes(stack: Stack) -> None:
    client = stack_redis(stack)
    by_id = {o.offering_id: o for o in catalog(client).offerings}
    offerings = [o for o in by_id.values() if o.model in (FAILING_MODEL, SLOW_MODEL)]
    assert all(len([o for o in offerings if o.model == m]) >= 2 for m in (FAILING_MODEL, SLOW_MODEL))
    rows = seed_history(stack, offerings)
    started = time.monotonic()
    wait_until(lambda: _ready(stack, offerings), timeout=READY_S, interval=2, message="offerings routable, measured")
    print(f"\n[recovery] {rows} probes of history; routable and measured after {time.monotonic() - started:.0f}s")

    since = dt.datetime.now(dt.UTC).isoformat()
    watch = Watch(client, GATEWAY_REGION, [o.offering_id for o in offerings])
    seconds = BASELINE_S + PICK_S + FAULT_S + AFTER_S
    loads = {
        m: Load(stack.base_url, stack.key, rate=RATE, seconds=seconds, body=_body(m))
        for m in (FAILING_MODEL, SLOW_MODEL)
    }
    with contextlib.ExitStack() as running:
        for load in loads.values():
            running.enter_context(load)
        watch.until(time.monotonic() + BASELINE_S)
        failing, slow = (by_id[_preferred(stack, m, since)] for m in (FAILING_MODEL, SLOW_MODEL))
        fault_at, fault_wall = time.monotonic(), time.time()
        _inject(stack, failing, slow)
        recovered_at = fault_at + FAULT_S
        watch.until(recovered_at + AFTER_S)
    client.close()

    records = {rid: r for m, load in loads.items() for rid, r in _records(stack, load, m, since).items()}
    result = report(loads, records, watch, failing, slow, fault_at, recovered_at, AFTER_S)
    print(result.table)
    (ROOT / "artifacts").mkdir(exist_ok=True)
    (ROOT / "artifacts" / "recovery-curve.txt").write_text(result.table + "\n")
    latency_incidents = [i for i in incidents(stack, slow.offering_id) if i["metric"] in LATENCY_METRICS]
    print("[recovery] latency incidents of the slowed offering:", latency_incidents or "none")
    print("[recovery] incidents of the failed offering:", incidents(stack, failing.offering_id) or "none")

    for offering, name in ((failing, "failed"), (slow, "slowed")):
        before, after = result.pre[offering.offering_id], result.back[offering.offering_id]
        assert before is not None and after is not None
        assert after >= 0.5 * before, (
            f"the {name} offering {offering.provider}/{offering.model} served {after:.0%} of its model's requests "
            f"{BACK_WITHIN_S - WINDOW_S:.0f}-{BACK_WITHIN_S:.0f}s after recovering, under half its {before:.0%} before"
        )
    left, before = result.late_fault[slow.offering_id], result.pre[slow.offering_id]
    assert left is not None and before is not None and left <= 0.5 * before, "routing never left the slowed offering"
    closed_while_slow = [
        i
        for i in latency_incidents
        if i["closed_at"] and fault_wall <= dt.datetime.fromisoformat(i["closed_at"]).timestamp() < fault_wall + FAULT_S
    ]
    assert not closed_while_slow, f"latency incidents closed while the offering was still slow: {closed_while_slow}"
