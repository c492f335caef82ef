"""The Celery application. Queues: default, metering, stripe and probes.<region>."""

from __future__ import annotations

import os

from celery import Celery
from kombu.entity import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokenway.settings")

app = Celery("tokenway")
app.config_from_object("django.conf:settings", namespace="CELERY")


def _queues() -> list[Queue]:
    from django.conf import settings

    names = ["default", "metering", "stripe", *(f"probes.{region}" for region in settings.TOKENWAY_REGIONS)]
    return [Queue(name) for name in names]


app.conf.task_queues = _queues()
app.conf.task_routes = {
    "metering.tasks.stripe_*": {"queue": "stripe"},
    "metering.tasks.*": {"queue": "metering"},
}
app.autodiscover_tasks()


def _beat_schedule() -> dict[str, dict[str, object]]:
    from evaluation.beat import BEAT_SCHEDULE as evaluation_beat
    from metering.schedule import BEAT_SCHEDULE as metering_beat
    from publishing.schedule import BEAT_SCHEDULE as publishing_beat
    from tokenway.schedule import BEAT_SCHEDULE as project_beat

    return {**metering_beat, **evaluation_beat, **publishing_beat, **project_beat}


app.conf.beat_schedule = _beat_schedule()

# Connects the worker heartbeat signals (health lists live workers), the task outcome counters and
# the optional task traces (OTEL_EXPORTER_OTLP_* set: one span per task run).
import tokenway.task_metrics  # noqa: E402
import tokenway.task_traces  # noqa: E402
import tokenway.worker_heartbeat  # noqa: E402, F401
