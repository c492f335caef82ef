"""Spend alerts: when a tenant's month-to-date spend crosses a threshold, tell it once (console + email)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.core.mail import send_mail
from django.db.models import Sum

from metering.models import Notification, SpendAlert, UsageRecord

logger = logging.getLogger(__name__)


def month_start(now: datetime | None = None) -> datetime:
    now = now or datetime.now(tz=UTC)
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def tenant_month_spend_micros(*, tenant_id: int, now: datetime | None = None) -> int:
    start = month_start(now)
    total = UsageRecord.objects.filter(tenant_id=tenant_id, finished_at__gte=start).aggregate(s=Sum("charge_micros"))
    return int(total["s"] or 0)


def spend_alerts_check(*, tenant_ids: set[int], now: datetime | None = None) -> int:
    """Fire each crossed threshold once per month; returns how many fired."""
    month = (now or datetime.now(tz=UTC)).strftime("%Y%m")
    fired = 0
    alerts = SpendAlert.objects.filter(tenant_id__in=tenant_ids).exclude(last_fired_month=month)
    spend: dict[int, int] = {}
    for alert in alerts:
        if alert.tenant_id not in spend:
            spend[alert.tenant_id] = tenant_month_spend_micros(tenant_id=alert.tenant_id, now=now)
        if spend[alert.tenant_id] < alert.threshold_micros:
            continue
        # Race: two consumers may cross the threshold together; the conditional update lets one win.
        won = SpendAlert.objects.filter(pk=alert.pk).exclude(last_fired_month=month).update(last_fired_month=month)
        if won:
            _notify(alert, spend[alert.tenant_id])
            fired += 1
    return fired


def _notify(alert: SpendAlert, spent: int) -> None:
    message = (
        f"Spend this month reached ${spent / 1_000_000:,.2f} (alert at ${alert.threshold_micros / 1_000_000:,.2f})."
    )
    Notification.objects.create(
        tenant_id=alert.tenant_id,
        kind="spend_alert",
        message=message,
        data={"threshold_micros": alert.threshold_micros, "spent_micros": spent},
    )
    if alert.email:
        send_mail("Tokenway spend alert", message, None, [alert.email], fail_silently=True)


def month_spend_by_key(*, tenant_id: int, now: datetime | None = None) -> dict[int, int]:
    """What the ledger booked this month (UTC), per key id (keys with a charge only)."""
    rows = (
        UsageRecord.objects.filter(tenant_id=tenant_id, finished_at__gte=month_start(now), charge_micros__gt=0)
        .values("key_id")
        .annotate(spent=Sum("charge_micros"))
    )
    return {int(row["key_id"]): int(row["spent"]) for row in rows}
