"""A stopping probe worker is not held by a batch: probes in flight are cut short, finished ones kept."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
import requests

from evaluation.runner import Job, run_jobs
from sim.server import SimHandle, start_in_thread
from tests.catalogs import sim_catalog
from tests.evaluation.conftest import find
from tests.routing.conftest import calm_profiles


@pytest.fixture(scope="module")
def timed_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimHandle]:
    """Stalls last their real length here (the module's other fleet runs at zero latency); no random
    faults, so the quick probe's outcome is the stop's doing alone."""
    handle = start_in_thread(seed=7, time_scale=1.0, profiles=calm_profiles(tmp_path_factory.mktemp("timed-sim")))
    yield handle
    handle.stop()


def test_a_stop_cuts_the_stalled_probes_short_and_keeps_the_finished_ones(timed_sim):
    sim = timed_sim
    catalog = sim_catalog(sim.base_url)
    by_id = {o.offering_id: o for o in catalog.offerings}
    stalled = find(catalog, "openai", "gpt-4.1-mini").offering_id
    quick = find(catalog, "deepseek", "deepseek-v4-flash").offering_id
    rule = {"provider": "openai", "kind": "stall_before_first_token", "count": 10, "stall_s": 60}
    assert requests.post(f"{sim.base_url}/_sim/faults", json=rule, timeout=5).status_code == 201
    stop = threading.Event()
    threading.Timer(8.0, stop.set).start()  # a price probe answers in ~2 s, the stall lasts 60
    started = time.monotonic()
    results = asyncio.run(run_jobs([Job(stalled, "price"), Job(quick, "price")], by_id, region="beijing", stop=stop))
    elapsed = time.monotonic() - started
    assert elapsed < 20, elapsed  # the batch ended at the stop, not after the 60 s stall
    assert [job.offering_id for job, _ in results] == [quick]
    assert all(outcome.ok for outcome in results[0][1])


def test_without_a_stop_every_probe_answers(sim):
    catalog = sim_catalog(sim.base_url)
    by_id = {o.offering_id: o for o in catalog.offerings}
    ids = [
        find(catalog, "openai", "gpt-4.1-mini").offering_id,
        find(catalog, "deepseek", "deepseek-v4-flash").offering_id,
    ]
    results = asyncio.run(
        run_jobs([Job(i, "performance") for i in ids], by_id, region="beijing", stop=threading.Event())
    )
    assert [job.offering_id for job, _ in results] == ids
