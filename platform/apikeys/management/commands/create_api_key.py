"""``python manage.py create_api_key --tenant SLUG --name NAME`` prints only the new key."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apikeys.services import api_key_issue
from tenants.models import Tenant


class Command(BaseCommand):
    help = "Issue an API key for a tenant and print it (only the key, once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="tenant slug")
        parser.add_argument("--name", required=True, help="key name")
        parser.add_argument("--test", action="store_true", help="issue a tw_test_ key")
        parser.add_argument(
            "--model-family-fallback", action="store_true",
            help="serve an unknown version of a known model family by its newest model instead of a 404",
        )  # fmt: skip

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"no tenant with slug {options['tenant']!r}")
        issued = api_key_issue(
            tenant=tenant, created_by=None, name=options["name"], live=not options["test"],
            model_family_fallback=True if options["model_family_fallback"] else None,
        )  # fmt: skip
        self.stdout.write(issued.plaintext)
