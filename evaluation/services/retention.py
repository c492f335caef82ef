"""Retention of raw probe rows: delete rows older than RAW_RETENTION_DAYS in small batches."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from evaluation.models import ProbeResult

# Aggregates cover at most 7 days; two weeks of raw rows leave room to recompute and investigate.
RAW_RETENTION_DAYS = 14
# Rows per DELETE: short statements keep locks and WAL bursts small on a busy table.
DELETE_BATCH = 10_000
# Batches per run; the task runs hourly, so a backlog drains over a few runs instead of one long one.
MAX_BATCHES = 50


def probe_results_prune(*, now: dt.datetime | None = None) -> int:
    cutoff = (now or timezone.now()) - dt.timedelta(days=RAW_RETENTION_DAYS)
    deleted = 0
    for _ in range(MAX_BATCHES):
        ids = list(ProbeResult.objects.filter(started_at__lt=cutoff).values_list("pk", flat=True)[:DELETE_BATCH])
        if not ids:
            break
        deleted += ProbeResult.objects.filter(pk__in=ids).delete()[0]
    return deleted
