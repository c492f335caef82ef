"""``python manage.py import_provider_invoice --provider <slug> <file.csv>``: a provider's invoice or usage
export into the books, reconciled per day and offering against our usage records.

Prints one row per (day, model): invoiced, booked by our usage journals, our computed cost, the ratio and a
verdict; exits 1 when a line drifts more than 1% from our computation (over- or under-billed, or more tokens
invoiced than recorded). A malformed file or a provider not in our catalog imports nothing (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metering.provider_invoices import InvoiceError, invoice_parse, provider_invoice_import
from metering.provider_truth import InvoiceMatch


def _verdict(match: InvoiceMatch) -> str:
    parts = [
        name
        for name, on in (
            ("over-billed", match.over_billed),
            ("under-billed", match.under_billed),
            ("tokens over", match.tokens_over),
        )
        if on
    ]
    return ", ".join(parts) or "ok"


class Command(BaseCommand):
    help = "Import a provider's invoice or usage export (CSV) and reconcile it per day and offering."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--provider", required=True, help="the provider's slug in our catalog")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        try:
            lines = invoice_parse(path.read_text(encoding="utf-8-sig"))
            result = provider_invoice_import(provider=options["provider"], lines=lines, source=path.name)
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: {exc}", returncode=2) from exc
        except InvoiceError as exc:
            raise CommandError(f"{path}: {exc}; nothing imported", returncode=2) from exc
        self.stdout.write(
            "day\tmodel\toffering\trequests\tinvoiced_micros\tbooked_micros\tcomputed_micros\tratio\tverdict"
        )
        for m in sorted(result.matches, key=lambda m: (m.line.day, m.line.model)):
            ratio = f"{m.amount_ratio:.4f}" if m.computed_micros else "-"
            self.stdout.write(
                f"{m.line.day}\t{m.line.model}\t{m.line.offering_id}\t{m.requests}\t{m.line.amount_micros}"
                f"\t{m.booked_micros}\t{m.computed_micros}\t{ratio}\t{_verdict(m)}"
            )
        for line in result.unmatched:
            self.stdout.write(f"{line.day}\t{line.model}\t-\t0\t{line.amount_micros}\t0\t0\t-\tnot in our catalog")
        booked = sum(spec.lines[0][1] for spec in result.journals)
        self.stdout.write(
            f"{len(lines)} line(s) imported; {len(result.journals)} provider-cost adjustment(s), {booked:+d} micro-USD"
        )
        drifting = [m for m in result.matches if _verdict(m) != "ok"]
        if drifting:
            raise CommandError(f"{len(drifting)} line(s) drift more than 1% from our computation")
