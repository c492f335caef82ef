"""A provider's invoice or usage export (CSV) into the books: lines per day and model, and the difference
between what it bills and what our usage journals booked, as a provider-cost journal.

CSV columns (header row; names case-insensitive, extra columns ignored):

- ``date``: ``YYYY-MM-DD`` or an ISO timestamp (its UTC day); required
- ``model`` (or ``offering``): our model slug or the provider's upstream model name; required
- ``amount_usd`` (or ``amount``): what the provider bills, in USD; required, not negative
- ``input_tokens`` (every prompt token, cached or not), ``cache_read_tokens``, ``cache_write_tokens``,
  ``output_tokens``, ``reasoning_tokens``: optional, 0 when absent

Rows of the same day and model are summed, so a per-request export and a daily invoice read the same.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from catalog.models import Offering, Provider
from metering.ledger import JournalSpec, journals_post
from metering.models import AccountKind, JournalLine, ProviderInvoiceLine
from metering.provider_truth import InvoiceMatch, invoice_matches

TOKEN_COLUMNS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens")
MAX_ROWS = 1_000_000  # a bigger export is a mistake (or an attack on the operator's terminal)
JOURNAL_KIND = "provider_invoice"


class InvoiceError(ValueError):
    """The file cannot be imported; the message names the line and the column."""


@dataclass
class ParsedLine:
    day: date
    model: str
    amount_micros: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_COLUMNS, 0))


def _day(raw: str, where: str) -> date:
    text = raw.strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvoiceError(f"{where}: date {raw!r} is not YYYY-MM-DD or an ISO timestamp") from exc
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).astimezone(UTC).date()


def _micros(raw: str, where: str) -> int:
    try:
        amount = Decimal(raw.strip())
    except InvalidOperation as exc:
        raise InvoiceError(f"{where}: amount {raw!r} is not a number") from exc
    if not amount.is_finite() or amount < 0:
        raise InvoiceError(f"{where}: amount {raw!r} must be a non-negative number of USD")
    return int((amount * 1_000_000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _count(raw: str | None, where: str, column: str) -> int:
    text = (raw or "").strip()
    if not text:
        return 0
    if not text.isdigit():
        raise InvoiceError(f"{where}: {column} {raw!r} is not a non-negative whole number")
    return int(text)


def _column(header: dict[str, str], *names: str) -> str | None:
    return next((header[name] for name in names if name in header), None)


def invoice_parse(text: str) -> list[ParsedLine]:
    """CSV text -> one line per (day, model); raises InvoiceError naming the first bad cell."""
    reader = csv.DictReader(io.StringIO(text))
    header = {name.strip().lower(): name for name in reader.fieldnames or ()}
    date_col, model_col = _column(header, "date", "day"), _column(header, "model", "offering")
    amount_col = _column(header, "amount_usd", "amount")
    missing = [name for name, col in (("date", date_col), ("model", model_col), ("amount_usd", amount_col)) if not col]
    if missing:
        raise InvoiceError(f"header: missing column(s) {', '.join(missing)}")
    assert date_col and model_col and amount_col
    lines: dict[tuple[date, str], ParsedLine] = {}
    for number, row in enumerate(reader, start=2):
        if number > MAX_ROWS + 1:
            raise InvoiceError(f"more than {MAX_ROWS} rows")
        where = f"line {number}"
        model = (row.get(model_col) or "").strip()
        if not model or len(model) > 200:
            raise InvoiceError(f"{where}: model must be 1-200 characters")
        day = _day(row.get(date_col) or "", where)
        line = lines.setdefault((day, model), ParsedLine(day, model))
        line.amount_micros += _micros(row.get(amount_col) or "", where)
        for column in TOKEN_COLUMNS:
            line.tokens[column] += _count(row.get(header[column]) if column in header else None, where, column)
    return list(lines.values())


def _offerings(provider: str) -> dict[str, int]:
    """Names an invoice may use for the provider's offerings (model slug, upstream name) -> offering id."""
    names: dict[str, int] = {}
    for oid, slug, upstream in Offering.objects.filter(provider__slug=provider).values_list(
        "id", "model__slug", "upstream_model"
    ):
        names.setdefault(slug, oid)
        names.setdefault(upstream, oid)
    return names


def _adjusted_so_far(line: ProviderInvoiceLine) -> tuple[int, int]:
    """(journals posted for this line, their provider-cost total)."""
    prefix = f"{JOURNAL_KIND}:{line.pk}:"
    rows = JournalLine.objects.filter(journal__key__startswith=prefix, account__kind=AccountKind.PROVIDER_COST)
    count = rows.values("journal_id").distinct().count()
    return count, int(rows.aggregate(total=Sum("amount_micros"))["total"] or 0)


def _adjustment(match: InvoiceMatch) -> JournalSpec | None:
    """Provider cost moves to what the invoice says: invoiced - booked by usage - earlier adjustments."""
    line = match.line
    count, adjusted = _adjusted_so_far(line)
    delta = line.amount_micros - match.booked_micros - adjusted
    if delta == 0:
        return None
    return JournalSpec(
        key=f"{JOURNAL_KIND}:{line.pk}:{count + 1}",  # the line's row is locked: no second writer of this number
        kind=JOURNAL_KIND,
        tenant_id=None,
        lines=[((None, AccountKind.PROVIDER_COST), delta), ((None, AccountKind.PROVIDER_PAYABLE), -delta)],
        memo=f"{line.provider} {line.day} {line.model}: invoiced {line.amount_micros}, booked {match.booked_micros}",
    )


@dataclass
class ImportResult:
    matches: list[InvoiceMatch]
    unmatched: list[ProviderInvoiceLine]
    journals: list[JournalSpec]


def provider_invoice_import(*, provider: str, lines: list[ParsedLine], source: str = "") -> ImportResult:
    """Store the lines (a re-import replaces them) and book each line's difference to the ledger, once.
    A provider not in our catalog is refused: a mistyped slug must not book a whole invoice as unmatched."""
    if not Provider.objects.filter(slug=provider).exists():
        raise InvoiceError(f"provider {provider!r} is not in our catalog")
    names = _offerings(provider)
    now = timezone.now()
    with transaction.atomic():
        stored = []
        for parsed in lines:
            # Race: two imports of the same export; the row lock orders them and the second books no difference.
            row, _ = ProviderInvoiceLine.objects.select_for_update().update_or_create(
                provider=provider, day=parsed.day, model=parsed.model,
                defaults={"offering_id": names.get(parsed.model), "amount_micros": parsed.amount_micros,
                          "source": source[:200], "imported_at": now, **parsed.tokens},
            )  # fmt: skip
            stored.append(row)
        matches = invoice_matches(lines=stored)
        unmatched = [row for row in stored if row.offering_id is None]
        unmatched_matches = [InvoiceMatch(row, 0, 0, 0, 0, 0) for row in unmatched]
        specs = [spec for m in [*matches, *unmatched_matches] if (spec := _adjustment(m)) is not None]
        journals_post(specs=specs, at=now)
    return ImportResult(matches, unmatched, specs)
