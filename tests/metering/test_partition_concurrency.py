"""The same usage event (and the same journal key) delivered on two connections at once is applied once,
although the partitioned tables cannot hold a request id or journal key unique by themselves."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from metering.ingest import usage_ingest
from metering.ledger import JournalSpec, journals_post
from metering.models import AccountKind, Balance, Journal, JournalLine, UsageRecord
from tests.metering.conftest import make_event
from tests.waiting import poll_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.local_servers]


def _lock_waiters() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return int(cursor.fetchone()[0])


def _race(first: Callable[[], Any], second: Callable[[], Any]) -> tuple[Any, Any]:
    """``first`` runs in a transaction held open until ``second`` (another connection) waits on its lock;
    then the first commits and the second finishes. Returns both results."""
    results: dict[str, Any] = {}
    applied, release = threading.Event(), threading.Event()

    def run_first() -> None:
        try:
            with transaction.atomic():
                results["first"] = first()
                applied.set()
                release.wait(20)
        finally:
            connections.close_all()

    def run_second() -> None:
        try:
            applied.wait(20)
            results["second"] = second()
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run_first), threading.Thread(target=run_second)]
    for thread in threads:
        thread.start()
    waited = poll_until(lambda: _lock_waiters() > 0, timeout=20)
    release.set()
    for thread in threads:
        thread.join(30)
    assert waited, "the second delivery never waited on the first one's key"
    return results["first"], results["second"]


def test_one_event_delivered_on_two_connections_at_once_is_billed_once(tenant):
    tenant.billing_mode = "postpaid"
    tenant.save()
    event = make_event(tenant.pk, request_id="req_twice")
    # The copy carries another finish time, a month later: another partition; only the key table can refuse it.
    copy = replace(event, finished_at=event.finished_at + 31 * 86_400)

    first, second = _race(lambda: usage_ingest(events=[event]), lambda: usage_ingest(events=[copy]))

    assert [e.request_id for e in first.inserted] == ["req_twice"]
    assert (second.inserted, second.duplicates) == ([], 1)
    assert UsageRecord.objects.filter(request_id="req_twice").count() == 1
    assert Journal.objects.filter(key="usage:req_twice").count() == 1
    assert JournalLine.objects.filter(journal__key="usage:req_twice").count() == 4
    balance = Balance.objects.get(account__tenant=tenant, account__kind=AccountKind.AVAILABLE)
    assert balance.amount_micros == -event.charge_micros


def test_one_journal_key_posted_on_two_connections_in_different_months_is_posted_once(tenant):
    spec = JournalSpec(
        "topup:pi_race",
        "credit_stripe",
        tenant.pk,
        [((tenant.pk, AccountKind.AVAILABLE), 5_000), ((None, AccountKind.STRIPE_CLEARING), -5_000)],
    )
    now = timezone.now()

    def post(at: Any) -> list[JournalSpec]:
        with transaction.atomic():
            return journals_post(specs=[spec], at=at)

    first, second = _race(lambda: post(now), lambda: post(now + timedelta(days=45)))

    assert (len(first), second) == (1, [])
    assert Journal.objects.filter(key="topup:pi_race").count() == 1
    balance = Balance.objects.get(account__tenant=tenant, account__kind=AccountKind.AVAILABLE)
    assert balance.amount_micros == 5_000
