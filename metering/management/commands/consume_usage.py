"""``python manage.py consume_usage``: the long-running metering consumer (lowest billing latency)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand

from foundation.redis_client import get_redis
from foundation.task_metrics import serve_process_metrics
from metering.consumer import UsageConsumer, consumer_name


class Command(BaseCommand):
    help = "Consume usage events from Redis into the ledger until stopped (or for --seconds)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--name", default="", help="consumer name (default host-pid); reuse it after a restart")
        parser.add_argument("--seconds", type=float, default=0.0, help="stop after this long (0 = forever)")
        parser.add_argument("--until-idle", action="store_true", help="stop once the stream has nothing for us")

    def handle(self, *args: Any, **options: Any) -> None:
        serve_process_metrics()  # TOKENWAY_METRICS_PORT, when set
        worker = UsageConsumer(client=get_redis(), name=options["name"] or consumer_name())
        if options["until_idle"]:
            while worker.run(until=time.monotonic() + 1.0, block_ms=100):
                pass
            return
        until = time.monotonic() + options["seconds"] if options["seconds"] else None
        worker.run(until=until)
