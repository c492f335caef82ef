"""Usage charts and the request log (live: new rows arrive when metering pushes an update)."""

from __future__ import annotations

from typing import Any

import orjson
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from apikeys.selectors import tenant_keys
from catalog.selectors import model_choices
from contracts.usage import USAGE_STATUSES
from frontend.data import exports, metering
from frontend.data.log_filter import RANGES, log_query_parse
from frontend.templatetags.tw import money_exact
from frontend.views.console_base import deny, render_console, tenant_page
from tenants.permissions import Action
from tenants.selectors import Membership

USAGE_DAYS = 30
EXPORT_GROUPS = {"day": "by_day", "model": "by_model", "provider": "by_provider", "key": "by_key"}
EXPORT_LOG_PAGES = 20  # the request log CSV holds at most this many pages (1,000 requests)
LOG_PAGE = 50  # the largest page the log's fragment serves


@tenant_page
def usage(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.USAGE_VIEW):
        return denied
    data = metering.usage_breakdown(tenant_id=membership.tenant_id, days=USAGE_DAYS)
    names = {k.pk: f"{k.name} ({k.prefix}…{k.last_four})" for k in tenant_keys(membership=membership)}
    for row in data["by_key"]:
        row["group"] = names.get(row["group"], f"#{row['group']}")
    group = request.GET.get("group", "day")
    if request.GET.get("format") == "csv":
        if group not in EXPORT_GROUPS:
            return HttpResponse(
                f"unknown group; use one of {', '.join(EXPORT_GROUPS)}\n", status=400, content_type="text/plain"
            )
        body = exports.usage_csv(data[EXPORT_GROUPS[group]], group)
        return _attachment(body, f"{membership.tenant.slug}-usage-by-{group}-{USAGE_DAYS}d.csv")
    return render_console(request, membership, "frontend/console/usage.html", "usage", usage=data, days=USAGE_DAYS)


@tenant_page
def requests_log(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.USAGE_VIEW):
        return denied
    keys = list(tenant_keys(membership=membership))
    found = log_query_parse(request.GET, key_ids={k.pk for k in keys})
    limit = request.GET.get("limit", "")
    size = {"limit": min(int(limit), LOG_PAGE)} if limit.isdigit() and int(limit) > 0 else {}
    tenant_id = membership.tenant_id
    page = metering.request_log(tenant_id=tenant_id, cursor=request.GET.get("cursor"), where=found.where, **size)
    if request.GET.get("format") == "csv":
        rows, cursor = list(page.rows), page.next_cursor
        for _ in range(EXPORT_LOG_PAGES - 1):
            if not cursor:
                break
            more = metering.request_log(tenant_id=tenant_id, cursor=cursor, where=found.where)
            rows.extend(more.rows)
            cursor = more.next_cursor
        return _attachment(exports.request_log_csv(rows), f"{membership.tenant.slug}-requests.csv")
    if request.GET.get("fragment"):
        context = {"rows": page.rows, "tenant": membership.tenant}
        return render(request, "frontend/console/_request_rows.html", context)
    return render_console(
        request, membership, "frontend/console/requests.html", "requests",
        rows=page.rows, next_cursor=page.next_cursor, f=found.params, query=found.query, statuses=USAGE_STATUSES,
        keys=keys, ranges=RANGES, models=model_choices(),
    )  # fmt: skip


@tenant_page
def request_detail(request: HttpRequest, membership: Membership, request_id: str) -> HttpResponse:
    """One request's full record (rejected ones too); another tenant's id is a 404 like an unknown one."""
    if denied := deny(request, membership, Action.USAGE_VIEW):
        return denied
    record = metering.request_get(tenant_id=membership.tenant_id, request_id=request_id)
    if request.GET.get("format") == "json":  # the playground's per-message tokens and cost (polled until billed)
        return JsonResponse(_facts(record) if record else {"found": False})
    if record is None:
        raise Http404("no such request")
    key = tenant_keys(membership=membership).filter(pk=record["key_id"]).first()
    raw = orjson.dumps(
        {k: v for k, v in record.items() if k not in ("finished", "tokens_in")}, option=orjson.OPT_INDENT_2
    )
    return render_console(
        request, membership, "frontend/console/request_detail.html", "requests", r=record, key=key, raw=raw.decode()
    )


def _attachment(body: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _facts(record: dict[str, Any]) -> dict[str, Any]:
    """What the tenant sees of one request: tokens and the charge (never the provider's cost)."""
    tokens = record.get("tokens") or {}
    return {
        "found": True,
        "id": record["id"],
        "status": record.get("status"),
        "tokens_in": record.get("tokens_in"),
        "output": tokens.get("output"),
        "reasoning": tokens.get("reasoning"),
        "cache_read": tokens.get("cache_read"),
        "charge_micros": record.get("charge_micros"),
        "charge": money_exact(record.get("charge_micros")),
    }


@tenant_page
def live_summary(request: HttpRequest, membership: Membership) -> HttpResponse:
    """Balance, month spend and the 30-day counters as a fragment, fetched when a live update arrives."""
    tenant_id = membership.tenant_id
    context = {
        "balance": metering.balance_micros(tenant_id=tenant_id),
        "month_spend": metering.month_spend_micros(tenant_id=tenant_id),
        "usage": metering.usage_breakdown(tenant_id=tenant_id, days=USAGE_DAYS),
    }
    return render(request, "frontend/console/_summary.html", context)
