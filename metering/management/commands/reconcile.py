"""``python manage.py reconcile``: prove the books add up against the running stack.

Prints each finding (also stored for operators) and exits non-zero when there is any.
"""

from __future__ import annotations

from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError

from metering.reconcile import reconciliation_run


class Command(BaseCommand):
    help = "Run every reconciliation check; print the findings; exit 1 when there are any."

    def handle(self, *args: Any, **options: Any) -> None:
        findings = reconciliation_run()
        for finding in findings:
            detail = orjson.dumps(finding.detail, default=str).decode()
            self.stdout.write(f"{finding.severity}\t{finding.check}\t{finding.subject}\t{detail}")
        if findings:
            raise CommandError(f"{len(findings)} finding(s)")
        self.stdout.write("books balance: no findings")
