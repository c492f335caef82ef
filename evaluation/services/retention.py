"""Retention: raw probe rows and rollups older than their horizon are deleted in small batches.

Statistics come from the rollups, so raw rows are kept only as long as a rebuild or an
investigation of the longest window (7 days) needs them.
"""

from __future__ import annotations

import datetime as dt

from django.db.models import Model, QuerySet
from django.utils import timezone

from evaluation.models import ProbeResult, ProbeRollup, Resolution

RAW_RETENTION_DAYS = 8  # the 7-day window plus a day of margin to rebuild it
# Minutes serve the 15m, 1h and 24h windows and their trends; hours the 7d window and its trend;
# days the 7d window and history.
ROLLUP_RETENTION_DAYS = {Resolution.MINUTE: 2, Resolution.HOUR: 35, Resolution.DAY: 400}
# Rows per DELETE: short statements keep locks and WAL bursts small on a busy table.
DELETE_BATCH = 10_000
# Batches per run and table; the task runs hourly, so a backlog drains over a few runs instead of one long one.
MAX_BATCHES = 50


def _delete_in_batches(queryset: QuerySet[Model]) -> int:
    deleted = 0
    for _ in range(MAX_BATCHES):
        ids = list(queryset.values_list("pk", flat=True)[:DELETE_BATCH])
        if not ids:
            break
        deleted += queryset.model._default_manager.filter(pk__in=ids).delete()[0]
    return deleted


def probe_results_prune(*, now: dt.datetime | None = None) -> int:
    """Delete raw rows and rollups past their retention; returns how many raw rows went."""
    now = now or timezone.now()
    deleted = _delete_in_batches(ProbeResult.objects.filter(started_at__lt=now - dt.timedelta(days=RAW_RETENTION_DAYS)))
    for resolution, days in ROLLUP_RETENTION_DAYS.items():
        _delete_in_batches(ProbeRollup.objects.filter(resolution=resolution, bucket__lt=now - dt.timedelta(days=days)))
    return deleted
