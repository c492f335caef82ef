"""Postpaid usage Stripe has not taken: meter events pending beyond ``UNSENT_MAX_AGE``, refused, or expired
(never sent within Stripe's dedupe window: ``meter_push.RESEND_CUTOFF``).

Usage of a postpaid tenant is billed only through Stripe's meter (``meter_push``). An event still pending
after ten minutes of pushes every five seconds is not late, it is stuck: its tenant has no Stripe customer,
Stripe refuses the chunk, or no pusher runs. Each such tenant is a reconciliation finding
(``metering.reconcile.check_meter_events_unsent``) and an operator alert, raised by the pusher and by
reconciliation alike (whichever runs: a dead stripe worker must not silence it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Min, Q, Sum
from django.utils import timezone

from metering.alerts import operator_alert
from metering.models import MeterEvent, MeterStatus
from tenants.models import Tenant

UNSENT_MAX_AGE = timedelta(minutes=10)  # 120 push passes: not a blip, and well inside Stripe's 24 h dedupe window
# Expired rows (never sent within Stripe's dedupe window) are reported this long: the oldest usage Stripe's meter
# takes at all; older unbilled usage is a matter for the findings already stored, not for every run.
EXPIRED_REPORTED = timedelta(days=35)
ALERT_KIND = "meter_events_unsent"


@dataclass(frozen=True)
class UnsentMeterEvents:
    tenant_id: int
    tenant_slug: str
    count: int
    value_micros: int  # the postpaid usage Stripe has not taken
    oldest: datetime
    reason: str  # no_stripe_customer | rejected | expired | stripe_failing | not_attempted

    def detail(self, now: datetime) -> dict[str, object]:
        return {"tenant_id": self.tenant_id, "count": self.count, "value_micros": self.value_micros,
                "oldest_age_s": int((now - self.oldest).total_seconds()), "reason": self.reason}  # fmt: skip


def meter_events_unsent(*, now: datetime | None = None) -> list[UnsentMeterEvents]:
    """Per tenant, its meter events pending for longer than ``UNSENT_MAX_AGE`` or rejected by Stripe."""
    now = now or timezone.now()
    stuck = (
        Q(status=MeterStatus.PENDING, created_at__lt=now - UNSENT_MAX_AGE)
        | Q(status=MeterStatus.REJECTED)
        | Q(status=MeterStatus.EXPIRED, created_at__gte=now - EXPIRED_REPORTED)
    )
    rows = (
        MeterEvent.objects.filter(stuck)
        .values("tenant_id")
        .annotate(
            count=Count("pk"),
            value=Sum("value"),
            oldest=Min("created_at"),
            no_customer=Count("pk", filter=Q(customer_id="")),
            rejected=Count("pk", filter=Q(status=MeterStatus.REJECTED)),
            expired=Count("pk", filter=Q(status=MeterStatus.EXPIRED)),
            failing=Count("pk", filter=~Q(last_error="")),
        )
        .order_by("tenant_id")
    )
    slugs = dict(Tenant.objects.filter(pk__in=[r["tenant_id"] for r in rows]).values_list("pk", "slug"))
    return [
        UnsentMeterEvents(
            tenant_id=row["tenant_id"],
            tenant_slug=slugs.get(row["tenant_id"], ""),
            count=row["count"],
            value_micros=int(row["value"] or 0),
            oldest=row["oldest"],
            reason=_reason(row),
        )
        for row in rows
    ]


def _reason(row: Mapping[str, Any]) -> str:
    if row["no_customer"]:
        return "no_stripe_customer"
    if row["rejected"]:
        return "rejected"
    if row["expired"]:
        return "expired"
    return "stripe_failing" if row["failing"] else "not_attempted"


def meter_events_alert(*, now: datetime | None = None) -> list[UnsentMeterEvents]:
    """Raise an operator alert per tenant with unsent meter events (at most once an hour each)."""
    now = now or timezone.now()
    found = meter_events_unsent(now=now)
    for unsent in found:
        operator_alert(
            kind=ALERT_KIND,
            subject=unsent.tenant_slug or str(unsent.tenant_id),
            message=f"{unsent.count} postpaid meter events not taken by Stripe ({unsent.reason}): usage unbilled",
            detail=unsent.detail(now),
        )
    return found
