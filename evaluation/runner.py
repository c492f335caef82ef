"""Run a batch of probes concurrently in one event loop: asyncio.gather under a semaphore.

Probes are I/O-bound, so one worker thread keeps dozens in flight. A probe that
raises something other than a classified ProbeFailure is a bug in our code: it is
logged and produces no row, so it can neither crash the batch nor poison aggregates.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from contracts.snapshot import OfferingSnapshot
from evaluation import conf
from evaluation.corpus import new_seed
from evaluation.probes.base import ProbeContext
from evaluation.probes.http import new_session
from evaluation.probes.outcome import Outcome
from evaluation.probes.registry import PROBES

logger = logging.getLogger(__name__)

# Probes in flight per batch; each holds one connection, so this also bounds sockets per worker thread.
CONCURRENCY = 64


@dataclass(frozen=True, slots=True)
class Job:
    offering_id: int
    kind: str


async def _one(semaphore: asyncio.Semaphore, ctx: ProbeContext, kind: str) -> list[Outcome]:
    async with semaphore:
        try:
            return await PROBES[kind](ctx)
        except Exception:
            logger.exception("probe %s of offering %s crashed", kind, ctx.offering.offering_id)
            return []


async def run_jobs(
    jobs: list[Job], offerings: dict[int, OfferingSnapshot], *, region: str
) -> list[tuple[Job, list[Outcome]]]:
    runnable = [job for job in jobs if job.offering_id in offerings and job.kind in PROBES]
    semaphore = asyncio.Semaphore(CONCURRENCY)
    async with new_session(total_timeout_s=conf.probe_timeout_s(), region=region) as session:
        tasks = [
            _one(
                semaphore,
                ProbeContext(session=session, offering=offerings[job.offering_id], region=region, seed=new_seed()),
                job.kind,
            )
            for job in runnable
        ]
        results = await asyncio.gather(*tasks)
    return list(zip(runnable, results, strict=True))
