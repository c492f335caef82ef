"""Spend alerts: when a tenant's month-to-date spend crosses a threshold, tell it once (console + email).
Operator alerts: a problem only operators can fix (Stripe not taking postpaid usage), once an hour."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.core.mail import mail_admins, send_mail
from django.db.models import Sum

from foundation.redis_client import get_redis
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


# An operator alert repeats at most this often per (kind, subject): a standing problem pages once an hour.
OPERATOR_ALERT_REPEAT_S = 3600
OPERATOR_ALERT_KEY = "tw:alert:{kind}:{subject}"


def operator_alert(*, kind: str, subject: str, message: str, detail: dict[str, object]) -> bool:
    """Tell the operators (ERROR log line and mail to ``settings.ADMINS``), once per repeat window; True when sent.

    Race: the push worker and reconciliation may raise the same alert at once; SET NX lets one of them send it.
    """
    if not get_redis().set(
        OPERATOR_ALERT_KEY.format(kind=kind, subject=subject), 1, nx=True, ex=OPERATOR_ALERT_REPEAT_S
    ):
        return False
    logger.error("operator alert %s %s: %s %s", kind, subject, message, detail)
    mail_admins(f"{kind}: {subject}", f"{message}\n\n{detail}", fail_silently=True)
    return True
