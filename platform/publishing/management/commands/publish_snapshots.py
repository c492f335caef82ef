"""``python manage.py publish_snapshots``: write the catalog snapshot, every key record and balance (startup)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from publishing.everything import gateway_state_publish


class Command(BaseCommand):
    help = "Publish the catalog snapshot, all API key records and missing balance counters to Redis."

    def handle(self, *args: Any, **options: Any) -> None:
        published = gateway_state_publish()
        self.stdout.write(f"catalog snapshot v{published.catalog_version}, {published.keys} key record(s)")
