"""A probe worker consumes only its own region's queue.

When a worker starts, every ``probes.<other region>`` queue it was told to consume
is cancelled (with an error in the log): TOKENWAY_REGION is the truth, ``-Q`` a hint.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_ready

from evaluation import conf

logger = logging.getLogger(__name__)


def foreign_probe_queues(queue_names: list[str], region: str) -> list[str]:
    return [name for name in queue_names if name.startswith("probes.") and name != f"probes.{region}"]


@worker_ready.connect
def _drop_foreign_probe_queues(sender: Any = None, **_: Any) -> None:
    consumer = sender
    if consumer is None or getattr(consumer, "task_consumer", None) is None:
        return
    names = [queue.name for queue in consumer.task_consumer.queues]
    for name in foreign_probe_queues(names, conf.this_region()):
        logger.error("worker of region %s was told to consume %s; not consuming it", conf.this_region(), name)
        consumer.cancel_task_queue(name)
