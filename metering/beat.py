"""Celery beat entries of the metering domain (merged into the app's beat_schedule)."""

from __future__ import annotations

from typing import Any

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # Billing latency target p99 <= 5 s: drain the usage stream every second.
    "metering.usage_ingest": {"task": "metering.tasks.usage_ingest", "schedule": 1.0},
    # Stripe must see usage within a minute; the issue asks for a push at least every 10 s.
    "metering.stripe_meter_push": {"task": "metering.tasks.stripe_meter_push", "schedule": 5.0},
    # Holds stranded by crashed gateways block balance; free them within seconds of expiry.
    "metering.holds_reap": {"task": "metering.tasks.holds_reap", "schedule": 5.0},
    # Books and counters checked (and avail drift corrected) every few minutes.
    "metering.reconciliation_run": {"task": "metering.tasks.reconciliation_run", "schedule": 300.0},
    # Month partitions are made 3 months ahead, so a daily run has weeks of slack (metering.partitions).
    "metering.partitions_maintain": {"task": "metering.tasks.partitions_maintain", "schedule": 86_400.0},
    # No invoice task: postpaid usage is billed through ONE path, Stripe Billing's meter (docs/billing.md).
}
