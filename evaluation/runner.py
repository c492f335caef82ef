"""Run a batch of probes concurrently in one event loop: asyncio.gather under a semaphore.

Probes are I/O-bound, so one worker thread keeps dozens in flight. A probe that
raises something other than a classified ProbeFailure is a bug in our code: it is
logged and produces no row, so it can neither crash the batch nor poison aggregates.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass

from contracts.snapshot import OfferingSnapshot
from evaluation import conf
from evaluation.corpus import new_seed
from evaluation.probes.base import ProbeContext
from evaluation.probes.http import new_session
from evaluation.probes.outcome import Outcome
from evaluation.probes.registry import ProbeFn, probe_for

logger = logging.getLogger(__name__)

# Probes in flight per batch; each holds one connection, so this also bounds sockets per worker thread.
CONCURRENCY = 64
# How often a running batch looks whether its worker is stopping.
STOP_POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class Job:
    offering_id: int
    kind: str


async def _one(semaphore: asyncio.Semaphore, ctx: ProbeContext, kind: str, probe: ProbeFn) -> list[Outcome]:
    async with semaphore:
        try:
            return await probe(ctx)
        except Exception:
            logger.exception("probe %s of offering %s crashed", kind, ctx.offering.offering_id)
            return []


async def run_jobs(
    jobs: list[Job], offerings: dict[int, OfferingSnapshot], *, region: str, stop: threading.Event | None = None
) -> list[tuple[Job, list[Outcome]]]:
    """Run the batch; once ``stop`` is set, probes still in flight are cut short and left out of the
    answer (a probe is a measurement: the next round repeats it), so a stopping worker is not held."""
    runnable = [
        (job, probe)
        for job in jobs
        if job.offering_id in offerings and (probe := probe_for(job.kind, offerings[job.offering_id])) is not None
    ]
    semaphore = asyncio.Semaphore(CONCURRENCY)
    async with new_session(total_timeout_s=conf.probe_timeout_s(), region=region) as session:
        tasks = [
            asyncio.create_task(
                _one(
                    semaphore,
                    ProbeContext(session=session, offering=offerings[job.offering_id], region=region, seed=new_seed()),
                    job.kind,
                    probe,
                )
            )
            for job, probe in runnable
        ]
        await _until_done_or_stopped(tasks, stop)
    return [(job, task.result()) for (job, _), task in zip(runnable, tasks, strict=True) if not task.cancelled()]


async def _until_done_or_stopped(tasks: list[asyncio.Task[list[Outcome]]], stop: threading.Event | None) -> None:
    pending: set[asyncio.Task[list[Outcome]]] = set(tasks)
    while pending:
        _, pending = await asyncio.wait(pending, timeout=None if stop is None else STOP_POLL_S)
        if pending and stop is not None and stop.is_set():
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            logger.info("worker stopping: %d probes of the batch cut short", len(pending))
            return
