"""CSV exports of a tenant's usage and request log: the tenant's charge only, never provider cost."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from contracts.usage import MICROS_PER_UNIT

USAGE_COLUMNS = ("requests", "tokens_in", "tokens_out", "cache_read", "charge")
LOG_COLUMNS = (
    "id",
    "finished",
    "status",
    "http_status",
    "error_code",
    "model",
    "provider",
    "region",
    "route_mode",
    "requested_model",
)


def usd(micros: Any) -> str:
    """Micro-units as an exact dollar string (every micro-unit kept): 5200 -> "0.005200"."""
    return f"{(Decimal(int(micros or 0)) / MICROS_PER_UNIT).quantize(Decimal('0.000001'))}"


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> Any:
    """Text a spreadsheet would run as a formula (a key named "=HYPERLINK(…)") is quoted with a leading "'"."""
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_START) else value


def _csv(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([cell(value) for value in row] for row in rows)
    return out.getvalue()


def usage_csv(rows: list[dict[str, Any]], group: str) -> str:
    """One line per group (day, model, provider or key) from ``usage_breakdown``'s rows."""
    key = "day" if group == "day" else "group"
    return _csv(
        (group, "requests", "input_tokens", "output_tokens", "cache_read_tokens", "charge_usd"),
        ((r.get(key) or "", r["requests"], r["tokens_in"], r["tokens_out"], r.get("cache_read", 0), usd(r["charge"]))
         for r in rows),
    )  # fmt: skip


def request_log_csv(rows: list[dict[str, Any]]) -> str:
    """One line per request (rejected ones too), newest first."""
    header = (*LOG_COLUMNS, "ttft_ms", "total_ms", "input_tokens", "output_tokens", "charge_usd")
    return _csv(
        header,
        ([r.get(c) if r.get(c) is not None else "" for c in LOG_COLUMNS]
         + [(r.get("timings") or {}).get("ttft_ms") or "", (r.get("timings") or {}).get("total_ms") or "",
            r.get("tokens_in") or 0, (r.get("tokens") or {}).get("output") or 0, usd(r.get("charge_micros"))]
         for r in rows),
    )  # fmt: skip
