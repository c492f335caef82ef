"""``python manage.py demo_credit --tenant demo``: the demo tenant's $50 of credit, once (``make run`` runs it
after ``seed_demo``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metering.services import demo_credit_ensure
from tenants.selectors import Tenant


class Command(BaseCommand):
    help = "Credit a tenant the demo's $50 through the ledger, once (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", default="demo", help="tenant slug (default: demo)")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"no tenant {options['tenant']!r}")
        credited = demo_credit_ensure(tenant)
        self.stdout.write(f"{'credited' if credited else 'already credited'} tenant {tenant.slug!r}")
