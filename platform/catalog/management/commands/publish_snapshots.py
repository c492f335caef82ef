"""``python manage.py publish_snapshots``: write the catalog snapshot and every key record (startup)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from apikeys.publish import publish_all_keys
from catalog.publish import publish_catalog


class Command(BaseCommand):
    help = "Publish the catalog snapshot and all API key records to Redis."

    def handle(self, *args: Any, **options: Any) -> None:
        version = publish_catalog()
        keys = publish_all_keys()
        self.stdout.write(f"catalog snapshot v{version}, {keys} key record(s)")
