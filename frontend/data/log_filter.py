"""The request log's filters read from the URL: model, key, status and a time range, the same for the
page, its live fragment, its older pages and its CSV export (each link carries ``LogQuery.query``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from django.utils import timezone

from contracts.usage import USAGE_STATUSES
from metering.selectors import GenerationFilter

RANGES = {"1h": timedelta(hours=1), "24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
MODEL_MAX = 200  # a model slug is far shorter; anything longer is an edited URL


@dataclass(frozen=True)
class LogQuery:
    """What the log is narrowed by, as parsed (``where``) and as the URL keeps it (``params``)."""

    where: GenerationFilter
    params: dict[str, str]

    @property
    def query(self) -> str:
        """The filters as a query string without "?" ("" when none), for every link the page makes."""
        return urlencode(self.params)


def _day(raw: str) -> date | None:
    try:
        return date.fromisoformat(raw)
    except ValueError:
        return None


def _window(get: Any, now: datetime) -> tuple[dict[str, str], datetime | None, datetime | None]:
    """A preset range (``range=24h``) or calendar days (``since=2026-11-01&until=2026-11-30``, until inclusive)."""
    preset = get.get("range", "")
    if preset in RANGES:
        return {"range": preset}, now - RANGES[preset], None
    params: dict[str, str] = {}
    since = until = None
    if first := _day(get.get("since", "")):
        params["since"] = first.isoformat()
        since = timezone.make_aware(datetime.combine(first, time.min))
    if last := _day(get.get("until", "")):
        params["until"] = last.isoformat()
        until = timezone.make_aware(datetime.combine(last + timedelta(days=1), time.min))
    return params, since, until


def log_query_parse(get: Any, *, key_ids: set[int], now: datetime | None = None) -> LogQuery:
    """Unknown values are dropped (an edited URL shows the unfiltered log, never an error): a status not in
    ``USAGE_STATUSES``, a key that is not one of the tenant's, a date that is not YYYY-MM-DD."""
    params, since, until = _window(get, now or timezone.now())
    status = get.get("status", "")
    status = status if status in USAGE_STATUSES else ""
    key = get.get("key", "")
    key_id = int(key) if key.isdigit() and int(key) in key_ids else None
    model = get.get("model", "").strip()[:MODEL_MAX]
    kept = {"model": model, "key": str(key_id or ""), "status": status}
    params = {**{k: v for k, v in kept.items() if v}, **params}
    where = GenerationFilter(key_id=key_id, model=model or None, status=status or None, since=since, until=until)
    return LogQuery(where=where, params=params)
