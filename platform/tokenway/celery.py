"""The Celery application. Queues: default, metering, stripe and probes.<region>."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import (
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)
from kombu.entity import Queue

from foundation import task_metrics, task_traces
from foundation.worker_heartbeat import start_heartbeat, stop_heartbeat

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
    from metering.beat import BEAT_SCHEDULE as metering_beat
    from publishing.beat import BEAT_SCHEDULE as publishing_beat
    from tokenway.beat import BEAT_SCHEDULE as project_beat

    return {**metering_beat, **evaluation_beat, **publishing_beat, **project_beat}


app.conf.beat_schedule = _beat_schedule()

# The worker heartbeat (health and /metrics count live workers), the task outcome and CPU counters, each worker's own
# metrics port, and the optional task traces (OTEL_EXPORTER_OTLP_* set: one span per task run).
worker_ready.connect(start_heartbeat, weak=False)
worker_shutdown.connect(stop_heartbeat, weak=False)
task_prerun.connect(task_metrics.on_task_prerun, weak=False)
task_postrun.connect(task_metrics.on_task_postrun, weak=False)
worker_ready.connect(task_metrics.serve_process_metrics, weak=False)
worker_init.connect(task_traces.on_worker_init, weak=False)
worker_shutdown.connect(task_traces.on_worker_stop, weak=False)
worker_process_shutdown.connect(task_traces.on_worker_stop, weak=False)
task_prerun.connect(task_traces.on_task_prerun, weak=False)
task_postrun.connect(task_traces.on_task_postrun, weak=False)
