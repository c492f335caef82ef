"""``python manage.py rotate_credential_keys``: re-encrypt BYOK secrets with the newest key."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from credentials.services import credentials_reencrypt_all


class Command(BaseCommand):
    help = "Re-encrypt every provider credential with the first key of TOKENWAY_CREDENTIAL_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        count = credentials_reencrypt_all()
        self.stdout.write(f"re-encrypted {count} credential(s)")
