"""Push postpaid usage from the MeterEvent outbox to Stripe's v2 meter event stream.

Rows are claimed with ``FOR UPDATE SKIP LOCKED`` (several pushers never send
the same row at once), sent in chunks, and marked sent after the 2xx. A crash
between the 2xx and the mark resends the same identifiers, which Stripe drops
as duplicates within 24 h. So a row whose first attempt is older than
``RESEND_CUTOFF`` is never sent again: it becomes ``expired`` for reconciliation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

import stripe
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from metering.crash import crash_point
from metering.models import MeterEvent, MeterStatus
from metering.stripe.client import MeterEventOut, MeterSessionExpired, meter_events_send
from metering.stripe.meter_health import meter_events_alert
from tenants.models import Tenant

logger = logging.getLogger(__name__)

STREAM_CHUNK = 100  # Stripe's maximum events per meter_event_stream request
PUSH_BATCH = 1_000  # rows claimed per transaction: 10 requests, well inside the rate limit
# Stripe dedupes identifiers for 24 h; stop resending an hour early to keep a margin for clock skew.
RESEND_CUTOFF = timedelta(hours=23)
# Stripe refuses events older than 35 days; such rows go to reconciliation too.
MAX_EVENT_AGE = timedelta(days=35) - timedelta(hours=1)


@dataclass
class PushResult:
    sent: int = 0
    failed: int = 0
    expired: int = 0
    waiting_customer: int = 0


def meter_events_push(*, limit: int = PUSH_BATCH) -> PushResult:
    """One pass over pending rows; safe to run concurrently and to repeat."""
    result = PushResult()
    result.expired = _expire_old()
    with transaction.atomic():
        rows = list(
            MeterEvent.objects.select_for_update(skip_locked=True)
            .filter(status=MeterStatus.PENDING)
            .exclude(customer_id="")
            .order_by("created_at")[:limit]
        )
        now = timezone.now()
        MeterEvent.objects.filter(pk__in=[r.pk for r in rows], first_attempt_at__isnull=True).update(
            first_attempt_at=now
        )
        MeterEvent.objects.filter(pk__in=[r.pk for r in rows]).update(attempts=F("attempts") + 1)
        for start in range(0, len(rows), STREAM_CHUNK):
            chunk = rows[start : start + STREAM_CHUNK]
            if start:
                crash_point("during_stripe_push")
            if _chunk_send(chunk):
                crash_point("after_stripe_2xx")
                MeterEvent.objects.filter(pk__in=[r.pk for r in chunk]).update(status=MeterStatus.SENT, sent_at=now)
                result.sent += len(chunk)
            else:
                result.failed += len(chunk)
                break  # keep order and the rate limit: the rest waits for the next pass
    result.waiting_customer = _attach_customers()
    meter_events_alert()
    return result


def _chunk_send(chunk: list[MeterEvent]) -> bool:
    events = [MeterEventOut(r.identifier, r.customer_id, r.value, r.timestamp) for r in chunk]
    key = f"meter:{chunk[0].identifier}:{chunk[-1].identifier}:{len(chunk)}"
    for _attempt in range(2):
        try:
            meter_events_send(events=events, idempotency_key=key)
            return True
        except MeterSessionExpired:
            continue
        except stripe.StripeError as exc:
            logger.warning("meter push failed: %s", exc)
            MeterEvent.objects.filter(pk__in=[r.pk for r in chunk]).update(last_error=str(exc)[:300])
            return False
    return False


def _expire_old() -> int:
    now = timezone.now()
    stale = Q(first_attempt_at__lt=now - RESEND_CUTOFF) | Q(timestamp__lt=now - MAX_EVENT_AGE)
    return MeterEvent.objects.filter(stale, status=MeterStatus.PENDING).update(status=MeterStatus.EXPIRED)


def _attach_customers() -> int:
    """Rows written before the tenant had a Stripe customer pick it up once it exists."""
    waiting = MeterEvent.objects.filter(status=MeterStatus.PENDING, customer_id="")
    count = 0
    for tenant_id in waiting.values_list("tenant_id", flat=True).distinct():
        customer = Tenant.objects.filter(pk=tenant_id).values_list("stripe_customer_id", flat=True).first()
        if customer:
            count += waiting.filter(tenant_id=tenant_id).update(customer_id=customer)
    return count
