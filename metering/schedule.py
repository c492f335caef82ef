"""Celery beat entries of the metering domain (merged into the app's beat_schedule)."""

from __future__ import annotations

from typing import Any

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {}
