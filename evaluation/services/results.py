"""Writes of raw probe results (and their rollups)."""

from __future__ import annotations

import datetime as dt

from django.db import transaction

from catalog.services import INTEGRITY_FIELDS, integrity_probes_ran
from evaluation.models import ProbeResult
from evaluation.probes.outcome import Outcome
from evaluation.runner import Job
from evaluation.services.rollup import rollups_add

# Rows per INSERT; a batch of 25 jobs yields at most ~100 rows, so one statement in practice.
INSERT_BATCH = 500


def _row(job: Job, region: str, outcome: Outcome) -> ProbeResult:
    return ProbeResult(
        offering_id=job.offering_id,
        region=region,
        kind=outcome.kind,
        variant=outcome.variant,
        started_at=dt.datetime.fromtimestamp(outcome.started_at, tz=dt.UTC),
        ttft_ms=outcome.ttft_ms,
        answer_ttft_ms=outcome.answer_ttft_ms,
        tps=outcome.tps,
        total_ms=outcome.total_ms,
        input_tokens=outcome.input_tokens,
        output_tokens=outcome.output_tokens,
        cached_tokens=outcome.cached_tokens,
        error_class=outcome.error_class,
        http_status=outcome.http_status,
        details=outcome.details,
    )


def probe_results_save(*, region: str, results: list[tuple[Job, list[Outcome]]]) -> int:
    """Insert the raw rows and add them to their minute, hour and day rollups, in one transaction."""
    rows = [_row(job, region, outcome) for job, outcomes in results for outcome in outcomes]
    with transaction.atomic():
        ProbeResult.objects.bulk_create(rows, batch_size=INSERT_BATCH)
        rollups_add(rows)
        integrity_probes_ran(ran=_integrity_ran(rows))
    return len(rows)


def _integrity_ran(rows: list[ProbeResult]) -> dict[tuple[int, str], dt.datetime]:
    """The newest completed price-truth and quality-canary probe per offering (a wrong canary answer
    counts: the probe ran; a timeout or an HTTP error does not)."""
    ran: dict[tuple[int, str], dt.datetime] = {}
    for row in rows:
        if row.kind not in INTEGRITY_FIELDS or (row.error_class and row.error_class != "wrong_answer"):
            continue
        key = (row.offering_id, row.kind)
        ran[key] = max(ran.get(key, row.started_at), row.started_at)
    return ran
