"""Celery beat entries of publishing (merged into the app's beat_schedule)."""

from __future__ import annotations

from typing import Any

# A change that met a Redis outage reaches the gateway within about this long of Redis coming back.
DRAIN_EVERY_S = 2.0

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "publishing.outbox_drain": {"task": "publishing.outbox_drain", "schedule": DRAIN_EVERY_S},
}
