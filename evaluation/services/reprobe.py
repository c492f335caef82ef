"""On-demand re-probes: an offering whose breaker opened in a gateway, or whose incident opened or
closed, is probed again from every region now rather than at its next scheduled time, so the
statistics the router reads catch up with a fault, and with its end, within a minute.

The requests are a Redis set (contracts.redis_keys.REPROBE_REQUESTS) that the gateway, which must not
import Django, can add to. Each offering is re-probed at most once per ``MIN_GAP_S``: a flapping
breaker cannot multiply the probing cost.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import redis
from celery import current_app

from contracts.redis_keys import REPROBE_REQUESTS
from evaluation.models import ProbeKind, ProbePolicy
from evaluation.offerings_to_probe import current_catalog, embedding_ids, probed_offerings
from evaluation.services import schedule
from evaluation.services.dispatch import PROBE_BATCH_TASK, queue_for

MIN_GAP_S = 20  # one re-probe per offering per 20 s: about a performance probe's cost per gateway fault
GAP_KEY = "tw:eval:reprobe:gap:{}"  # SET NX EX marker of an offering's last re-probe
MAX_PER_RUN = 500  # offerings popped per run; the rest wait for the next run


def reprobe_request(*, client: redis.Redis, offering_ids: Iterable[int]) -> None:
    ids = [str(oid) for oid in offering_ids]
    if ids:
        client.sadd(REPROBE_REQUESTS, *ids)


def _popped(client: redis.Redis) -> list[int]:
    raw: object = client.spop(REPROBE_REQUESTS, MAX_PER_RUN)
    out = []
    for item in raw if isinstance(raw, list) else []:
        text = item.decode() if isinstance(item, bytes) else str(item)
        if text.isdigit():
            out.append(int(text))
    return out


def _due_now(client: redis.Redis, offering_ids: list[int]) -> list[schedule.Due]:
    """Performance probes of the requested offerings in each region they are probed from (their policy's)."""
    catalog = probed_offerings(current_catalog())
    probed = sorted(set(offering_ids) & set(catalog))
    policies = {p.offering_id: p for p in ProbePolicy.objects.filter(offering_id__in=probed)}
    due = []
    for member in schedule.desired_members(probed, policies, embedding_ids=embedding_ids(catalog)):
        item = schedule.parse_member(member)
        if item.kind == ProbeKind.PERFORMANCE:
            due.append(item)
    # Race: two runs (or two beats) popping the same offering; the NX marker lets only one probe it.
    return [d for d in due if client.set(GAP_KEY.format(f"{d.region}|{d.offering_id}"), "1", nx=True, ex=MIN_GAP_S)]


def reprobes_dispatch(*, client: redis.Redis) -> int:
    """Send a performance probe now for every requested offering and region; returns how many."""
    requested = _popped(client)
    if not requested:
        return 0
    by_region: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for item in _due_now(client, requested):
        by_region[item.region].append((item.offering_id, item.kind))
    for region, jobs in by_region.items():
        current_app.send_task(PROBE_BATCH_TASK, args=(region, jobs), queue=queue_for(region))
    return sum(len(jobs) for jobs in by_region.values())
