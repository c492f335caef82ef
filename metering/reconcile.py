"""Reconciliation: prove the books add up and store what does not, for operators.

Each check returns findings; ``reconciliation_run`` stores them as
ReconciliationFinding rows (severity error = money may be wrong).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import orjson
from django.db import connection
from django.db.models import Sum
from django.utils import timezone

from contracts.redis_keys import PREFIX
from foundation.redis_client import get_redis
from metering.available import tenant_available_correct, tenant_available_ensure
from metering.holds import holds_expired_count
from metering.models import (
    AccountKind,
    Journal,
    MeterEvent,
    MeterStatus,
    PaymentReversal,
    ProviderInvoiceLine,
    ReconciliationFinding,
    TopUpStatus,
    UsageRecord,
)
from metering.partitions import USAGE, first_attached_month
from metering.provider_truth import DRIFT_SHARE, invoice_matches, reported_cost_drift
from metering.stripe.client import meter_accepted_totals
from metering.stripe.lifecycle import reversal_missing_keys
from metering.stripe.meter_health import meter_events_alert
from tenants.models import BillingMode, Tenant

logger = logging.getLogger(__name__)

# A finished request whose usage is not in PostgreSQL after this long is lost, not late.
INGEST_GRACE_S = 60
# Holds past expiry by more than this mean the reaper is not running.
REAP_GRACE_S = 30
GEN_SCAN_LIMIT = 20_000  # generation copies examined per run; bounded so a run stays short
RECENT = timedelta(days=2)  # usage/journal cross-checks look this far back (older is settled)


@dataclass
class Finding:
    check: str
    severity: str
    subject: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


def _rows(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return list(cursor.fetchall())


def check_journals_balance() -> list[Finding]:
    rows = _rows(
        "SELECT journal_id, SUM(amount_micros) FROM metering_journalline GROUP BY journal_id "
        "HAVING SUM(amount_micros) <> 0 LIMIT 100"
    )
    return [Finding("journal_unbalanced", "error", f"journal:{jid}", {"sum": int(total)}) for jid, total in rows]


def check_balances_match_ledger() -> list[Finding]:
    """Each balance equals its account's lines: those still attached plus the carry of detached months
    (metering.retention). One statement, so a detach commits wholly before or after what it reads."""
    rows = _rows(
        "SELECT b.account_id, b.amount_micros, COALESCE(c.amount_micros, 0) + COALESCE(l.total, 0) "
        "FROM metering_balance b LEFT JOIN metering_ledgercarry c ON c.account_id = b.account_id "
        "LEFT JOIN (SELECT account_id, SUM(amount_micros) AS total FROM metering_journalline GROUP BY account_id) l "
        "ON l.account_id = b.account_id "
        "WHERE b.amount_micros <> COALESCE(c.amount_micros, 0) + COALESCE(l.total, 0) LIMIT 100"
    )
    return [
        Finding("balance_mismatch", "error", f"account:{aid}", {"balance": int(bal), "ledger": int(led)})
        for aid, bal, led in rows
    ]


def check_usage_has_journal() -> list[Finding]:
    since = timezone.now() - RECENT
    rows = _rows(
        "SELECT u.request_id FROM metering_usagerecord u LEFT JOIN metering_journal j "
        "ON j.key = 'usage:' || u.request_id WHERE u.created_at >= %s AND j.id IS NULL AND u.status <> %s LIMIT 100",
        [since, "rejected"],  # a rejected call moved no money: it has no journal by design
    )
    return [Finding("usage_without_journal", "error", rid) for (rid,) in rows]


def check_journal_has_usage() -> list[Finding]:
    """The reverse of usage_without_journal: a usage journal whose usage record is missing. A record of a
    month detached by retention is not missing: its request id is kept (metering_usagekey) with a finish
    time before the first month still attached (a late event, ingested long after it finished)."""
    since = timezone.now() - RECENT
    rows = _rows(
        "SELECT j.key, k.finished_at FROM metering_journal j "
        "LEFT JOIN metering_usagerecord u ON 'usage:' || u.request_id = j.key "
        "LEFT JOIN metering_usagekey k ON 'usage:' || k.request_id = j.key "
        "WHERE j.kind = 'usage' AND j.created_at >= %s AND u.id IS NULL LIMIT 100",
        [since],
    )
    first = first_attached_month(USAGE[0].name)
    detached = {key for key, finished in rows if finished is not None and first is not None and finished < first}
    return [Finding("journal_without_usage", "error", key) for key, _ in rows if key not in detached]


def check_prepaid_not_negative() -> list[Finding]:
    """PostgreSQL refuses a new negative prepaid balance (migration 0004); one from before, or left by a switch
    from postpaid, is reported."""
    rows = _rows(
        "SELECT t.slug, b.amount_micros FROM metering_balance b JOIN metering_account a ON a.id = b.account_id "
        "JOIN tenants_tenant t ON t.id = a.tenant_id WHERE a.kind = %s AND t.billing_mode = %s "
        "AND b.amount_micros < 0 LIMIT 100",
        [AccountKind.AVAILABLE, BillingMode.PREPAID],
    )
    return [Finding("prepaid_balance_negative", "error", slug, {"balance": int(amount)}) for slug, amount in rows]


def check_credits_have_payments() -> list[Finding]:
    """Every Stripe top-up credit has its succeeded payment row (the webhook writes both in one transaction)."""
    rows = _rows(
        "SELECT j.key FROM metering_journal j LEFT JOIN metering_topup t "
        "ON 'topup:' || t.payment_intent_id = j.key AND t.status = %s "
        "WHERE j.kind = 'credit_stripe' AND j.key LIKE 'topup:%%' AND t.id IS NULL LIMIT 100",
        [TopUpStatus.SUCCEEDED],
    )
    return [Finding("credit_without_payment", "error", key) for (key,) in rows]


def check_reversals_applied() -> list[Finding]:
    """Each refund and dispute Stripe reported moved the money its last status says (metering.stripe.lifecycle)."""
    journals = set(
        Journal.objects.filter(key__regex=r"^(refund|dispute):").values_list("key", flat=True)
    )  # refund and dispute journals are few: one or two per reversal
    findings = []
    for row in PaymentReversal.objects.all().iterator():
        if row.tenant_id is None:
            findings.append(Finding("reversal_unattributed", "error", row.stripe_id, {"status": row.status}))
        elif missing := reversal_missing_keys(row, posted=journals):
            findings.append(Finding("reversal_not_applied", "error", row.stripe_id, {"missing": missing}))
    return findings


def check_finished_requests_ingested(*, now: float | None = None) -> list[Finding]:
    """Every generation copy the gateway wrote (finished > grace ago) has a usage record."""
    client = get_redis()
    now = time.time() if now is None else now
    candidates: list[str] = []
    for key in client.scan_iter(match=f"{PREFIX}gen:*", count=1000):
        candidates.append(key.decode())
        if len(candidates) >= GEN_SCAN_LIMIT:
            break
    findings = []
    for start in range(0, len(candidates), 500):
        chunk = candidates[start : start + 500]
        pipe = client.pipeline(transaction=False)  # GETs, not MGET: the copies are in many cluster slots
        for key in chunk:
            pipe.get(key)
        ids = {k[len(f"{PREFIX}gen:") :]: raw for k, raw in zip(chunk, pipe.execute(), strict=True) if raw}
        known = set(UsageRecord.objects.filter(request_id__in=list(ids)).values_list("request_id", flat=True))
        for rid, raw in ids.items():
            finished = float(orjson.loads(raw).get("finished_at") or 0)
            if rid not in known and finished and finished < now - INGEST_GRACE_S:
                findings.append(Finding("usage_missing", "error", rid, {"finished_at": finished}))
    return findings


def check_no_expired_holds(*, now: float | None = None) -> list[Finding]:
    now = time.time() if now is None else now
    tenant_ids = Tenant.objects.values_list("pk", flat=True).iterator()
    count = holds_expired_count(get_redis(), tenant_ids=tenant_ids, before=now - REAP_GRACE_S)
    return [Finding("expired_holds", "warning", "", {"count": count})] if count else []


def check_meter_totals(*, since: datetime | None = None, until: datetime | None = None) -> list[Finding]:
    """Our sent meter events per customer equal what Stripe (the emulator) accepted."""
    until = until or timezone.now()
    since = since or until - timedelta(hours=1)
    ours: dict[str, int] = {
        row["customer_id"]: int(row["total"] or 0)
        for row in MeterEvent.objects.filter(status=MeterStatus.SENT, timestamp__gte=since, timestamp__lt=until)
        .values("customer_id")
        .annotate(total=Sum("value"))
    }
    findings = [
        Finding("meter_expired", "error", row.identifier, {"value": row.value})
        for row in MeterEvent.objects.filter(status=MeterStatus.EXPIRED, timestamp__gte=since)[:100]
    ]
    theirs = meter_accepted_totals(since=since, until=until)
    if theirs is None:
        return findings
    for customer in set(ours) | set(theirs):
        if ours.get(customer, 0) != theirs.get(customer, 0):
            detail = {"ours": ours.get(customer, 0), "stripe": theirs.get(customer, 0)}
            findings.append(Finding("meter_total_mismatch", "error", customer, detail))
    return findings


def check_topups_credited_once() -> list[Finding]:
    """Each succeeded PaymentIntent has exactly one credit journal (the unique key makes >1 impossible)."""
    rows = _rows(
        "SELECT t.payment_intent_id FROM metering_topup t LEFT JOIN metering_journal j "
        "ON j.key = 'topup:' || t.payment_intent_id WHERE t.status = %s AND j.id IS NULL LIMIT 100",
        [TopUpStatus.SUCCEEDED],
    )
    return [Finding("topup_not_credited", "error", pi) for (pi,) in rows]


def check_available_counters() -> list[Finding]:
    """Redis avail versus the ledger; a drift seen on two runs in a row is corrected."""
    findings = []
    for tenant in Tenant.objects.all().iterator():
        tenant_available_ensure(tenant=tenant)
        outcome = tenant_available_correct(tenant=tenant)
        if outcome and outcome[0]:
            drift, applied = outcome
            severity = "warning" if applied else "info"
            findings.append(Finding("available_drift", severity, tenant.slug, {"drift": drift, "corrected": applied}))
    return findings


def check_provider_cost_drift() -> list[Finding]:
    """Per offering, the provider's own reported cost against ours: more than 1% apart is drift."""
    findings = []
    for drift in reported_cost_drift(since=timezone.now() - RECENT):
        if drift.drifting:
            detail = {
                "provider": drift.provider,
                "requests": drift.requests,
                "computed": drift.computed_micros,
                "reported": drift.reported_micros,
                "ratio": round(drift.ratio, 4),
                "tolerance": DRIFT_SHARE,
            }
            findings.append(Finding("provider_cost_drift", "error", f"offering:{drift.offering_id}", detail))
    return findings


def check_provider_invoices() -> list[Finding]:
    """Each imported invoice line (the last 2 days) against our usage of its day and offering."""
    lines = list(ProviderInvoiceLine.objects.filter(day__gte=(timezone.now() - RECENT).date()))
    findings = [
        Finding("invoice_line_unmatched", "warning", f"{line.provider}:{line.day}:{line.model}", {})
        for line in lines
        if line.offering_id is None
    ]
    for match in invoice_matches(lines=lines):
        line = match.line
        detail = {"provider": line.provider, "day": line.day.isoformat(), "model": line.model,
                  "invoiced": line.amount_micros, "computed": match.computed_micros, "booked": match.booked_micros,
                  "requests": match.requests, "invoiced_tokens": line.input_tokens + line.output_tokens,
                  "recorded_tokens": match.input_tokens + match.output_tokens}  # fmt: skip
        subject = f"offering:{line.offering_id}:{line.day}"
        if match.over_billed or match.under_billed:
            findings.append(Finding("provider_invoice_drift", "error", subject, detail))
        if match.tokens_over:
            findings.append(Finding("provider_invoice_tokens_over", "error", subject, detail))
    return findings


CHECKS: list[Callable[[], list[Finding]]] = [
    check_journals_balance,
    check_balances_match_ledger,
    check_usage_has_journal,
    check_journal_has_usage,
    check_prepaid_not_negative,
    check_credits_have_payments,
    check_reversals_applied,
    check_finished_requests_ingested,
    check_no_expired_holds,
    check_meter_totals,
    check_topups_credited_once,
    check_available_counters,
    check_provider_cost_drift,
    check_provider_invoices,
]


def check_meter_events_unsent() -> list[Finding]:
    """Postpaid usage Stripe has not taken: per tenant, meter events pending beyond
    ``meter_health.UNSENT_MAX_AGE``, rejected or expired (an error each, and an operator alert)."""
    now = timezone.now()
    return [
        Finding("meter_events_unsent", "error", f"tenant:{unsent.tenant_slug}", unsent.detail(now))
        for unsent in meter_events_alert(now=now)
    ]


CHECKS.append(check_meter_events_unsent)


def reconciliation_run() -> list[Finding]:
    run_at = timezone.now()
    findings: list[Finding] = []
    for check in CHECKS:
        findings += check()
    ReconciliationFinding.objects.bulk_create(
        [
            ReconciliationFinding(
                run_at=run_at, check_name=f.check, severity=f.severity, subject=f.subject[:200], detail=f.detail
            )
            for f in findings
        ]
    )
    if any(f.severity == "error" for f in findings):
        logger.error("reconciliation found %d problems", len(findings))
    return findings


# --- The usage pipeline and the money of each call (issue 21): appended checks ----------------------


def check_usage_pipeline() -> list[Finding]:
    """Dead-lettered usage (booked by no one until replayed), entries stuck unacknowledged, and billing
    behind: each an error, with the pending age and consumer lag (metering.pipeline_health)."""
    from metering.pipeline_health import usage_pipeline_state

    state = usage_pipeline_state(get_redis())
    detail = state.as_dict()
    findings = []
    if state.dead_letters:
        findings.append(Finding("usage_dead_lettered", "error", "usage_dead_letters", detail))
    if state.stuck:
        findings.append(Finding("usage_stuck", "error", "usage_stream", detail))
    if state.oldest_unbilled_s > INGEST_GRACE_S:
        findings.append(Finding("usage_behind", "error", "usage_stream", detail))
    return findings


def check_usage_journal_matches_row() -> list[Finding]:
    """Each usage journal moves exactly its row's charge (spent, and available plus any shortfall) and
    provider cost: one micro-unit apart is a finding."""
    from metering.books_usage import usage_journals_off

    return [
        Finding("usage_journal_mismatch", "error", f"usage:{off.request_id}",
                {"charge": off.charge_micros, "cost": off.cost_micros, "journal_spent": off.spent_micros,
                 "journal_paid": off.paid_micros, "journal_cost": off.booked_cost_micros})
        for off in usage_journals_off(since=timezone.now() - RECENT)
    ]  # fmt: skip


def check_holds_have_expiry() -> list[Finding]:
    """Every open hold has its expiry entry, or no reaper would ever release it."""
    from metering.books_usage import holds_without_expiry

    tenant_ids = Tenant.objects.values_list("pk", flat=True).iterator()
    return [
        Finding("hold_without_expiry", "error", f"tenant:{tenant_id}:hold:{hold_id}", {"held_micros": held})
        for tenant_id, hold_id, held in holds_without_expiry(get_redis(), tenant_ids=tenant_ids)
    ]


CHECKS += [check_usage_pipeline, check_usage_journal_matches_row, check_holds_have_expiry]
