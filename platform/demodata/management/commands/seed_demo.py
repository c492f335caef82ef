"""``python manage.py seed_demo``: demo tenant, users and API key (idempotent), then publish snapshots.
Its credit is metering's to give: ``python manage.py demo_credit`` (``make run`` runs both)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from demodata.seed import DEMO_EMAIL, DEMO_TENANT_SLUG, demo_key_path, seed_demo
from publishing.everything import gateway_state_publish


class Command(BaseCommand):
    help = "Create the demo tenant, users and API key (reused when still valid); publish snapshots."

    def handle(self, *args: Any, **options: Any) -> None:
        seed = seed_demo()
        gateway_state_publish()
        state = "issued a new" if seed.key_created else "kept the existing"
        self.stdout.write(
            f"demo tenant {DEMO_TENANT_SLUG!r} (owner {DEMO_EMAIL}); {state} demo key in {demo_key_path()}"
        )
