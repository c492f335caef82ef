"""The project's Celery app with evaluation's beat entries removed: the baseline beat of
``bench.probing_processes`` (what the stack's Celery processes cost without probing)."""

from __future__ import annotations

from evaluation.beat import BEAT_SCHEDULE as EVALUATION_BEAT
from tokenway.celery import app

app.conf.beat_schedule = {name: entry for name, entry in app.conf.beat_schedule.items() if name not in EVALUATION_BEAT}

__all__ = ["app"]
