"""Celery beat entries of the project itself (merged into the app's beat_schedule)."""

from __future__ import annotations

from typing import Any

# A Redis that came back empty is repopulated within about this long; the check is one EXISTS.
STATE_CHECK_EVERY_S = 2.0

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "tokenway.redis_state_check": {"task": "tokenway.tasks.redis_state_check", "schedule": STATE_CHECK_EVERY_S},
}
