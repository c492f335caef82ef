"""The dispatcher: due probes -> batches on probes.<region>, spread over the dispatch period."""

from __future__ import annotations

import random
import time
from collections import defaultdict

from celery import current_app

from evaluation.beat import DISPATCH_PERIOD_S
from evaluation.models import ProbePolicy
from evaluation.offerings_to_probe import current_catalog, embedding_ids, probed_offerings
from evaluation.services import schedule
from foundation.redis_client import get_redis

# Jobs per Celery task: big enough that one event loop overlaps many probes, small enough to spread load.
BATCH_SIZE = 25
# Sent by name (evaluation.tasks registers it under this name), so this service does not import the tasks
# module that calls it.
PROBE_BATCH_TASK = "evaluation.probe_batch"


def queue_for(region: str) -> str:
    return f"probes.{region}"


def _batches(due: list[schedule.Due]) -> dict[str, list[list[tuple[int, str]]]]:
    by_region: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for item in due:
        by_region[item.region].append((item.offering_id, item.kind))
    return {
        region: [jobs[i : i + BATCH_SIZE] for i in range(0, len(jobs), BATCH_SIZE)]
        for region, jobs in by_region.items()
    }


def probes_dispatch(
    *, now: float | None = None, rng: random.Random | None = None, spread_s: float = DISPATCH_PERIOD_S
) -> int:
    """Enqueue every due probe; returns how many. Safe to call concurrently (a lock makes one of them a no-op)."""
    client = get_redis()
    # Race: two beats (or a slow run overlapping the next) would both claim the same members; the lock serialises them.
    if not client.set(schedule.LOCK_KEY, "1", nx=True, ex=DISPATCH_PERIOD_S):
        return 0
    try:
        now = time.time() if now is None else now
        rng = rng or random.Random()
        probed = probed_offerings(current_catalog())
        offerings = sorted(probed)
        policies = {p.offering_id: p for p in ProbePolicy.objects.filter(offering_id__in=offerings)}
        wanted = schedule.desired_members(offerings, policies, embedding_ids=embedding_ids(probed))
        schedule.schedule_sync(client=client, wanted=wanted, now=now, rng=rng)
        due = schedule.schedule_claim(client=client, wanted=wanted, now=now, rng=rng)
        for region, batches in _batches(due).items():
            for jobs in batches:
                if spread_s > 0:
                    countdown = rng.uniform(0, spread_s)
                    current_app.send_task(
                        PROBE_BATCH_TASK, args=(region, jobs), queue=queue_for(region), countdown=countdown
                    )
                else:
                    current_app.send_task(PROBE_BATCH_TASK, args=(region, jobs), queue=queue_for(region))
        return len(due)
    finally:
        client.delete(schedule.LOCK_KEY)
