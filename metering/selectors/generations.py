"""One call's record and the call lists: GET /api/v1/generation(s), the console's request log, the current key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from django.db.models import Q, Sum

from contracts.model_names import resolution_in_reason
from contracts.redis_keys import generation
from foundation.redis_client import get_redis
from metering.alerts import month_start, tenant_month_spend_micros
from metering.cursors import cursor_decode, cursor_encode
from metering.ledger import tenant_account_balance
from metering.models import (
    UsageRecord,
)
from metering.selectors.limits_left import spend_limits_left
from tenants.models import BillingMode, Tenant


def _tokens(rec: dict[str, Any]) -> dict[str, int]:
    names = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning")
    return {name: int(rec.get(name) or 0) for name in names}


def generation_get(*, tenant_id: int, request_id: str) -> dict[str, Any] | None:
    """The per-request record: PostgreSQL when ingested, else the gateway's short-lived Redis copy."""
    record = UsageRecord.objects.filter(request_id=request_id, tenant_id=tenant_id).first()
    if record is not None:
        return _generation_from_record(record)
    raw = get_redis().get(generation(request_id))
    if raw is None:
        return None
    event = orjson.loads(raw)
    if event.get("tenant_id") != tenant_id:
        return None
    return _generation_from_event(event)


def generation_costs_get(*, request_id: str) -> dict[str, Any] | None:
    """Staff only: one ingested request with what the provider costs us beside what the tenant pays
    (booked, ours and the provider's own figure) and the margin. Never for a tenant-facing page."""
    record = UsageRecord.objects.filter(request_id=request_id).select_related("tenant").first()
    if record is None:
        return None
    return {
        **_generation_from_record(record),
        "tenant": record.tenant.slug,
        "cost_micros": record.cost_micros,
        "computed_cost_micros": record.computed_cost_micros,
        "reported_cost_micros": record.reported_cost_micros,
        "margin_micros": record.charge_micros - record.cost_micros,
    }


def _generation_from_record(r: UsageRecord) -> dict[str, Any]:
    return {
        "id": r.request_id,
        "ingested": True,
        "key_id": r.key_id,
        "model": r.model,
        "provider": r.provider,
        "offering_id": r.offering_id,
        "region": r.region,
        "route_mode": r.route_mode,
        "route_reason": r.route_reason,
        **requested_model(r.model, r.route_reason),
        "tokens": _tokens(r.__dict__),
        "usage_source": r.usage_source,
        "price_version": r.price_version,
        "charge_micros": r.charge_micros,  # the tenant's charge only: provider cost is staff data (issue 12)
        "cache": {
            "read_tokens": r.cache_read,
            "saved_micros": cache_saved_micros(r),
            "fingerprint": r.cache_fingerprint,
        },
        "timings": {"ttft_ms": r.ttft_ms, "total_ms": r.total_ms, "finished_at": r.finished_at.isoformat()},
        "status": r.status,
        "http_status": r.http_status,
        "error_code": r.error_code,
        "end_state": r.end_state,
        "finish_reason": r.finish_reason,
        "upstream_id": r.upstream_id,
        "stream": r.stream,
        "byok": r.byok,
        "attempts": r.attempts,
        "flags": r.flags,
        "route_candidates": r.route_candidates,
    }


def requested_model(model: str | None, route_reason: str) -> dict[str, Any]:
    """What the caller named beside the model that served it: ``model_resolution`` is ``slug`` (the
    same), ``alias`` (another name of it), ``family`` (another version: the key opted in) or ``auto``
    (the router picked the model)."""
    if route_reason.startswith("auto:"):
        return {"requested_model": "auto", "model_resolution": "auto"}
    found = resolution_in_reason(route_reason)
    kind, asked = found if found is not None else ("slug", model)
    return {"requested_model": asked, "model_resolution": kind}


def cache_saved_micros(r: UsageRecord) -> int:
    if not r.prices:
        return 0
    cache_cost = -(-r.cache_read * int(r.prices.get("cache_read") or 0) // 1_000_000)
    return max(r.full_input_price_micros - cache_cost, 0)


def _generation_from_event(e: dict[str, Any]) -> dict[str, Any]:
    tokens = _tokens(e.get("tokens") or {})
    finished = e.get("finished_at") or 0
    return {
        "id": e["request_id"],
        "ingested": False,
        "key_id": e.get("key_id"),
        "model": e.get("model"),
        "provider": e.get("provider"),
        "offering_id": e.get("offering_id"),
        "region": e.get("region"),
        "route_mode": e.get("route_mode"),
        "route_reason": e.get("route_reason"),
        **requested_model(e.get("model"), e.get("route_reason") or ""),
        "tokens": tokens,
        "usage_source": e.get("usage_source"),
        "price_version": (e.get("prices") or {}).get("version"),
        "charge_micros": max(int(e.get("charge_micros") or 0), 0),
        "cache": {"read_tokens": tokens["cache_read"], "saved_micros": None, "fingerprint": e.get("cache_fingerprint")},
        "timings": {
            "ttft_ms": e.get("ttft_ms"),
            "total_ms": e.get("total_ms"),
            "finished_at": datetime.fromtimestamp(finished, tz=UTC).isoformat() if finished else None,
        },
        "status": e.get("status"),
        "http_status": e.get("http_status"),
        "error_code": e.get("error_code") or "",
        "end_state": e.get("end_state") or "",
        "finish_reason": e.get("finish_reason") or "",
        "upstream_id": e.get("upstream_id") or "",
        "stream": e.get("stream"),
        "byok": e.get("byok"),
        "attempts": e.get("attempts"),
        "flags": e.get("flags") or [],
        "route_candidates": e.get("route_candidates") or [],
    }


@dataclass(frozen=True)
class GenerationFilter:
    """What a generations list may be narrowed by (None: any)."""

    key_id: int | None = None
    model: str | None = None
    provider: str | None = None
    status: str | None = None
    since: datetime | None = None  # finished at or after
    until: datetime | None = None  # finished before


@dataclass(frozen=True)
class GenerationPage:
    data: list[dict[str, Any]]
    next_cursor: str | None

    @property
    def has_more(self) -> bool:
        return self.next_cursor is not None


def generations_list(
    *, tenant_id: int, where: GenerationFilter | None = None, cursor: str | None = None, limit: int = 20
) -> GenerationPage:
    """Ingested requests of one tenant, newest first, rejected ones included. Keyset pagination on
    (finished_at, id): a page is one index range scan however deep, and rows ingested meanwhile never
    shift the pages (they land before the first). Raises ``BadCursor`` on a cursor not made here."""
    rows = UsageRecord.objects.filter(tenant_id=tenant_id, **_filter_kwargs(where or GenerationFilter()))
    if cursor:
        at, row_id = cursor_decode(cursor)
        rows = rows.filter(Q(finished_at__lt=at) | Q(finished_at=at, id__lt=row_id))
    page = list(rows.order_by("-finished_at", "-id")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return GenerationPage(
        [_generation_from_record(r) for r in page],
        cursor_encode(page[-1].finished_at, page[-1].pk) if more else None,
    )


def _filter_kwargs(where: GenerationFilter) -> dict[str, Any]:
    names = {"key_id": "key_id", "model": "model", "provider": "provider", "status": "status",
             "since": "finished_at__gte", "until": "finished_at__lt"}  # fmt: skip
    return {lookup: getattr(where, name) for name, lookup in names.items() if getattr(where, name) is not None}


def key_summary(*, api_key: Any) -> dict[str, Any]:
    """GET /api/v1/key: the key's limits and month spend, the tenant's balance, and what is left of the
    key's monthly budget and the tenant's monthly spend limit with open holds counted (as admission counts)."""
    tenant: Tenant = api_key.tenant
    tenant_left, keys_left = spend_limits_left(
        tenant_id=tenant.pk,
        tenant_limit_micros=tenant.monthly_spend_limit_micros,
        key_budgets={api_key.pk: api_key.monthly_budget_micros},
    )
    key_left = keys_left[api_key.pk]
    start = month_start()
    key_spend = UsageRecord.objects.filter(tenant=tenant, key_id=api_key.pk, finished_at__gte=start).aggregate(
        s=Sum("charge_micros")
    )["s"]
    balance = tenant_account_balance(tenant_id=tenant.pk)
    postpaid = tenant.billing_mode == BillingMode.POSTPAID
    return {
        "key": {
            "id": api_key.pk,
            "name": api_key.name,
            "prefix": api_key.prefix,
            "limits": {
                "rpm": api_key.rpm_limit,
                "tpm": api_key.tpm_limit,
                "max_concurrency": api_key.max_concurrency,
                "monthly_budget_micros": api_key.monthly_budget_micros,
            },
            "spend_this_month_micros": int(key_spend or 0),
            "held_micros": key_left.held_micros,
            "budget_remaining_micros": key_left.remaining_micros,
        },
        "tenant": {
            "slug": tenant.slug,
            "billing_mode": tenant.billing_mode,
            "balance_micros": balance,
            "credit_limit_micros": tenant.credit_limit_micros if postpaid else None,
            "spendable_micros": balance + (tenant.credit_limit_micros if postpaid else 0),
            "spend_this_month_micros": tenant_month_spend_micros(tenant_id=tenant.pk),
            "monthly_spend_limit_micros": tenant.monthly_spend_limit_micros,
            "held_micros": tenant_left.held_micros,
            "spend_limit_remaining_micros": tenant_left.remaining_micros,
        },
    }
