"""Celery tasks of the evaluation domain: thin wrappers that call services and own retries.

Functions end in ``_task``; the service keeps the plain name, the registered name is ``evaluation.<service>``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from celery import Task, shared_task
from celery.signals import worker_shutting_down

from evaluation import conf
from evaluation.offerings_to_probe import current_catalog, probed_offerings
from evaluation.runner import Job, run_jobs
from evaluation.services.dispatch import PROBE_BATCH_TASK, probes_dispatch, queue_for
from evaluation.services.refresh import stats_refresh
from evaluation.services.reprobe import reprobes_dispatch
from evaluation.services.results import probe_results_save
from evaluation.services.retention import probe_results_prune
from foundation.redis_client import get_redis

logger = logging.getLogger(__name__)

# A misrouted batch is forwarded to its region's queue once; a second misroute means a misconfigured fleet.
MAX_REROUTES = 1

# Set when this worker begins its warm shutdown: running batches cut their in-flight probes short.
STOPPING = threading.Event()


@worker_shutting_down.connect
def _stop_probing(**_: object) -> None:
    STOPPING.set()


@shared_task(name="evaluation.probes_dispatch", ignore_result=True)
def probes_dispatch_task() -> int:
    return probes_dispatch()


@shared_task(name="evaluation.reprobes_dispatch", ignore_result=True)
def reprobes_dispatch_task() -> int:
    return reprobes_dispatch(client=get_redis())


def _misrouted(task: Task[..., object], region: str) -> bool:
    here = conf.this_region()
    routing_key = (task.request.delivery_info or {}).get("routing_key")
    return region != here or (routing_key is not None and routing_key != queue_for(region))


@shared_task(name=PROBE_BATCH_TASK, bind=True, ignore_result=False, acks_late=True)
def probe_batch_task(
    self: Task[[str, list[list[Any]], int], dict[str, Any]], region: str, jobs: list[list[Any]], reroutes: int = 0
) -> dict[str, Any]:
    """Run one batch of probes from this worker's region; refuse batches meant for another region."""
    if _misrouted(self, region):
        logger.warning(
            "probe batch for %s reached a %s worker (queue %s)", region, conf.this_region(), self.request.delivery_info
        )
        if reroutes < MAX_REROUTES:
            probe_batch_task.apply_async(args=(region, jobs, reroutes + 1), queue=queue_for(region))
        return {"refused": True, "region": region, "worker_region": conf.this_region()}
    offerings = probed_offerings(current_catalog())
    parsed = [Job(offering_id=int(oid), kind=str(kind)) for oid, kind in jobs]
    results = asyncio.run(run_jobs(parsed, offerings, region=region, stop=STOPPING))
    saved = probe_results_save(region=region, results=results)
    return {"refused": False, "region": region, "jobs": len(parsed), "rows": saved}


# A refresh that takes longer than the beat period must not overlap the next one.
REFRESH_LOCK_KEY = "tw:eval:refresh:lock"
REFRESH_LOCK_S = 55


@shared_task(name="evaluation.stats_refresh", ignore_result=True)
def stats_refresh_task() -> int | None:
    client = get_redis()
    if not client.set(REFRESH_LOCK_KEY, "1", nx=True, ex=REFRESH_LOCK_S):
        return None
    try:
        return stats_refresh().version
    finally:
        client.delete(REFRESH_LOCK_KEY)


@shared_task(name="evaluation.probe_results_prune", ignore_result=True)
def probe_results_prune_task() -> int:
    return probe_results_prune()
