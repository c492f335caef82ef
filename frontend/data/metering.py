"""Console billing data over ``metering.selectors``: balance, usage, savings, the request log
(``generations_list``), top-ups, invoices, spend alerts and notifications, in the shapes the templates read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from metering.selectors import (
    BadCursor,
    GenerationFilter,
    TopUpShown,
    cache_savings_micros,
    generation_get,
    generations_list,
    spend_limits_left,
    tenant_balance_micros,
    tenant_invoices,
    tenant_month_spend_micros,
    tenant_notifications,
    tenant_spend_alerts,
    tenant_topups_shown,
    tenant_usage,
)

SUMMARY_DAYS = 30  # the summary cards' window ("Requests (30 days)"), the same on every page that shows them
LOG_LIMIT = 50  # request log rows per page: a screenful on a laptop
GROUPS = {"by_model": "model", "by_provider": "provider", "by_key": "key"}


def balance_micros(*, tenant_id: int) -> int | None:
    return int(tenant_balance_micros(tenant_id=tenant_id))


def month_spend_micros(*, tenant_id: int) -> int:
    return int(tenant_month_spend_micros(tenant_id=tenant_id))


def limits_left(*, tenant: Any, keys: list[Any]) -> tuple[Any, dict[int, Any]]:
    """The tenant's monthly spend limit and each key's monthly budget: limit, spent, held, remaining."""
    return spend_limits_left(
        tenant_id=tenant.pk, tenant_limit_micros=tenant.monthly_spend_limit_micros,
        key_budgets={key.pk: key.monthly_budget_micros for key in keys if key.monthly_budget_micros is not None},
    )  # fmt: skip


def _row(row: dict[str, Any], label: Any) -> dict[str, Any]:
    """A selector row in the charts' shape (``usage.js`` and the templates read these names)."""
    shaped = {
        "group": label, "requests": row["requests"], "charge": row["charge_micros"],
        "tokens_in": row["input_tokens"], "tokens_out": row["output_tokens"], "cache_read": row["cache_read_tokens"],
    }  # fmt: skip
    if "cost_micros" in row:  # provider cost: the ops dashboard only, never a tenant's page
        shaped["cost"] = row["cost_micros"]
    return shaped


def _by_day(tenant_id: int | None, start: datetime, end: datetime) -> list[dict[str, Any]]:
    days = []
    for row in tenant_usage(tenant_id=tenant_id, start=start, end=end, group="day", with_cost=tenant_id is None):
        day = timezone.make_aware(datetime.fromisoformat(row["day"]))  # TruncDay's (current) time zone
        saved = cache_savings_micros(start=max(day, start), end=min(day + timedelta(days=1), end), tenant_id=tenant_id)
        days.append({**_row(row, None), "day": row["day"], "savings": saved})
    return days


def usage_breakdown(*, tenant_id: int | None, days: int = 30) -> dict[str, Any]:
    """{"by_day": [...], "by_model": [...], "by_provider": [...], "by_key": [...], "totals": {...}}."""
    end = timezone.now()
    start = end - timedelta(days=days)
    out: dict[str, Any] = {"by_day": _by_day(tenant_id, start, end)}
    for name, group in GROUPS.items():
        rows = tenant_usage(tenant_id=tenant_id, start=start, end=end, group=group, with_cost=tenant_id is None)
        out[name] = [_row(row, row[group]) for row in rows]
    summed = ("requests", "charge", "tokens_in", "tokens_out") + (("cost",) if tenant_id is None else ())
    totals = {k: sum(r[k] for r in out["by_day"]) for k in summed}
    totals["savings"] = sum(r["savings"] for r in out["by_day"])
    out["totals"] = totals
    return out


@dataclass(frozen=True)
class LogPage:
    rows: list[dict[str, Any]]
    next_cursor: str | None


def request_log(
    *, tenant_id: int, limit: int = LOG_LIMIT, cursor: str | None = None, where: GenerationFilter | None = None
) -> LogPage:
    """Newest first through ``metering.selectors.generations_list``, rejected calls included; a cursor
    that is not ours (an edited URL) gives the first page."""
    where = where or GenerationFilter()
    try:
        page = generations_list(tenant_id=tenant_id, where=where, cursor=cursor, limit=limit)
    except BadCursor:
        page = generations_list(tenant_id=tenant_id, where=where, limit=limit)
    return LogPage([_display(item) for item in page.data], page.next_cursor)


def request_get(*, tenant_id: int, request_id: str) -> dict[str, Any] | None:
    item = generation_get(tenant_id=tenant_id, request_id=request_id)
    return _display(item) if item is not None else None


def _display(item: dict[str, Any]) -> dict[str, Any]:
    """The selector's record plus what the templates format: a datetime and the input total."""
    finished = item["timings"].get("finished_at")
    tokens = item["tokens"]
    tokens_in = tokens["input_uncached"] + tokens["cache_read"] + tokens["cache_write_5m"] + tokens["cache_write_1h"]
    return {**item, "finished": datetime.fromisoformat(finished) if finished else None, "tokens_in": tokens_in}


def topups_shown(*, tenant_id: int) -> list[TopUpShown]:
    """Recent top-ups with what became of each payment: refunds and disputes included."""
    return tenant_topups_shown(tenant_id=tenant_id)


def invoices(*, tenant_id: int) -> list[dict[str, Any]]:
    return tenant_invoices(tenant_id=tenant_id)


def spend_alerts(*, tenant_id: int) -> list[Any]:
    return list(tenant_spend_alerts(tenant_id=tenant_id))


def notifications(*, tenant_id: int) -> list[Any]:
    return list(tenant_notifications(tenant_id=tenant_id))
