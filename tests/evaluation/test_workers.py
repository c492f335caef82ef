"""Real Celery workers on the Redis broker: a region's worker runs only its region's probes."""

from __future__ import annotations

import random

import pytest
from celery.contrib.testing.worker import start_worker
from celery.worker import state as worker_state
from django.test import override_settings

from evaluation.models import ProbeResult
from evaluation.services.dispatch import probes_dispatch
from evaluation.services.schedule import DUE_KEY
from evaluation.tasks import probe_batch_task
from evaluation.worker_region import foreign_probe_queues
from tests.evaluation.conftest import find
from tests.waiting import wait_until
from tokenway.celery import app

pytestmark = pytest.mark.django_db(transaction=True)


def _worker_idle() -> bool:
    """The in-process worker holds no task: none prefetched, none running."""
    return not worker_state.reserved_requests and not worker_state.active_requests


@override_settings(TOKENWAY_REGION="beijing")
def test_worker_of_one_region_never_runs_another_regions_probes(catalog, redis_client):
    offering = find(catalog, "openai", "gpt-4.1-mini")
    jobs = [[offering.offering_id, "performance"]]
    mine = probe_batch_task.apply_async(args=("beijing", jobs), queue="probes.beijing")
    theirs = probe_batch_task.apply_async(args=("shanghai", jobs), queue="probes.shanghai")
    misrouted = probe_batch_task.apply_async(args=("shenzhen", jobs), queue="probes.beijing")
    with start_worker(
        app,
        pool="threads",
        concurrency=2,
        queues=["probes.beijing", "probes.shanghai"],
        perform_ping_check=False,
        shutdown_timeout=30,
    ):
        assert mine.get(timeout=30) == {"refused": False, "region": "beijing", "jobs": 1, "rows": 2}
        assert misrouted.get(timeout=30)["refused"] is True
        # whatever the worker took from its queues has run before the checks below
        wait_until(_worker_idle, timeout=30, message="the worker still holds a probe batch")
    assert set(ProbeResult.objects.values_list("region", flat=True)) == {"beijing"}
    # the foreign batch is either left on its queue or refused and handed back to it; never run here
    assert theirs.state == "PENDING" or theirs.result["refused"] is True
    assert redis_client.llen("probes.shenzhen") == 1  # the misrouted batch was handed to its own region


def test_foreign_queue_detection():
    assert foreign_probe_queues(["default", "probes.beijing", "probes.chengdu"], "beijing") == ["probes.chengdu"]


@override_settings(
    TOKENWAY_REGIONS=["beijing", "shanghai"],
    TOKENWAY_EVAL_PERFORMANCE_INTERVAL_S=300,
    TOKENWAY_EVAL_HOURLY_INTERVAL_S=3600,
)
def test_dispatcher_spreads_and_reschedules_every_offering_and_region(catalog, redis_client):
    rng = random.Random(1)
    probed = [o for o in catalog.offerings if o.status != "disabled"]
    embedding = len([o for o in probed if "embeddings" in o.parameters])  # performance and price kinds only
    offerings = len(probed)
    now = 1_000_000.0
    sent = sum(probes_dispatch(now=now + step * 30, rng=rng, spread_s=0) for step in range(11))  # 5.5 min of beat ticks
    assert redis_client.zcard(DUE_KEY) == (offerings - embedding) * 2 * 5 + embedding * 2 * 2
    performance = [m for m, score in redis_client.zrange(DUE_KEY, 0, -1, withscores=True) if b"|performance|" in m]
    assert len(performance) == offerings * 2
    backlog = redis_client.llen("probes.beijing") + redis_client.llen("probes.shanghai")
    assert backlog > 0 and sent >= offerings * 2  # every offering x region got its performance probe within 5.5 min
    scores = [score for m, score in redis_client.zrange(DUE_KEY, 0, -1, withscores=True) if b"|performance|" in m]
    assert max(scores) <= now + 10 * 30 + 300  # never further than one interval ahead
