"""``python manage.py push_meter_events``: push the meter outbox to Stripe (once, or in a loop)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand

from metering.stripe.meter_push import meter_events_push


class Command(BaseCommand):
    help = "Send pending postpaid usage to Stripe's meter event stream."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--loop", type=float, default=0.0, help="repeat every N seconds until stopped")
        parser.add_argument("--until-idle", action="store_true", help="repeat until nothing is pending")

    def handle(self, *args: Any, **options: Any) -> None:
        while True:
            result = meter_events_push()
            if options["until_idle"] and result.sent == 0 and result.failed == 0:
                return
            if not options["loop"] and not options["until_idle"]:
                return
            time.sleep(options["loop"] or 0.05)
