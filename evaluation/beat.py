"""Celery beat entries of the evaluation domain (merged into the app's beat_schedule)."""

from __future__ import annotations

from typing import Any

# How often beat runs the dispatcher; a due probe may wait this long, so probe intervals are shortened by it.
DISPATCH_PERIOD_S = 30
# The issue asks for statistics at least every minute; half that keeps the leaderboard lively.
STATS_REFRESH_S = 30
# On-demand re-probes (breaker opened, incident opened or closed): a request waits at most this long.
# A run with nothing requested is one SPOP.
REPROBE_PERIOD_S = 10
# Retention deletes in batches; hourly keeps each run short.
PRUNE_S = 3600

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "evaluation-dispatch": {
        "task": "evaluation.probes_dispatch",
        "schedule": float(DISPATCH_PERIOD_S),
        "options": {"queue": "default", "expires": DISPATCH_PERIOD_S},
    },
    "evaluation-stats-refresh": {
        "task": "evaluation.stats_refresh",
        "schedule": float(STATS_REFRESH_S),
        "options": {"queue": "default", "expires": STATS_REFRESH_S},
    },
    "evaluation-reprobes": {
        "task": "evaluation.reprobes_dispatch",
        "schedule": float(REPROBE_PERIOD_S),
        "options": {"queue": "default", "expires": REPROBE_PERIOD_S},
    },
    "evaluation-prune": {
        "task": "evaluation.probe_results_prune",
        "schedule": float(PRUNE_S),
        "options": {"queue": "default"},
    },
}
