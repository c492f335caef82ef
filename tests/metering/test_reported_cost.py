"""Booking the provider's own reported cost: what the ledger owes the provider, and when it does not trust it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from metering.ingest import usage_ingest
from metering.models import AccountKind, JournalLine, UsageRecord
from metering.reconcile import check_provider_cost_drift
from tests.metering.conftest import make_event

pytestmark = pytest.mark.django_db(transaction=True)


def _provider_cost_line(request_id: str) -> int | None:
    line = JournalLine.objects.filter(journal__key=f"usage:{request_id}", account__kind=AccountKind.PROVIDER_COST)
    return line.values_list("amount_micros", flat=True).first()


def test_without_a_reported_cost_ours_is_booked(tenant):
    event = make_event(tenant.pk)
    usage_ingest(events=[event])
    row = UsageRecord.objects.get(request_id=event.request_id)
    assert (row.cost_micros, row.computed_cost_micros, row.reported_cost_micros) == (event.cost_micros,) * 2 + (None,)
    assert _provider_cost_line(event.request_id) == event.cost_micros


def test_an_absurd_reported_cost_is_kept_and_flagged_but_ours_is_booked(tenant):
    event = make_event(tenant.pk)
    absurd = event.cost_micros * 1000 + 5_000_000
    usage_ingest(events=[replace(event, provider_cost_micros=absurd)])
    row = UsageRecord.objects.get(request_id=event.request_id)
    assert (row.cost_micros, row.reported_cost_micros) == (event.cost_micros, absurd)
    assert "reported_cost_absurd" in row.flags
    assert _provider_cost_line(event.request_id) == event.cost_micros
    [finding] = check_provider_cost_drift()  # the provider's figure is still compared with ours
    assert finding.check == "provider_cost_drift" and finding.detail["reported"] == absurd


def test_byok_books_no_provider_cost_and_is_left_out_of_drift(tenant):
    event = make_event(tenant.pk, byok=True)
    usage_ingest(events=[replace(event, provider_cost_micros=event.cost_micros * 2)])
    row = UsageRecord.objects.get(request_id=event.request_id)
    assert (row.cost_micros, row.computed_cost_micros) == (0, 0)  # the provider bills the tenant
    assert _provider_cost_line(event.request_id) is None
    assert check_provider_cost_drift() == []
