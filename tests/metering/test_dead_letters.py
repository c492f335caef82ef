"""No single usage event stops billing: values PostgreSQL refuses are made storable at the edge, and a
batch that still cannot be booked is split until the entry at fault is alone; that entry is dead-lettered
with its error while the rest is booked, and the operator's replay books it once after a repair."""

from __future__ import annotations

import dataclasses
import time
from io import StringIO

import pytest
from django.core.management import call_command

from contracts.redis_keys import USAGE_GROUP
from contracts.storable import BIGINT_MAX
from contracts.usage import TEXT_COLUMNS, UsageEvent
from metering.consumer import UsageConsumer
from metering.dead_letters import (
    DEAD_LETTER_STREAM,
    dead_letter_repair,
    dead_letters_list,
    dead_letters_replay,
    dead_letters_total,
)
from metering.ingest import usage_ingest
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, Journal, UsageRecord
from metering.services import balance_topup
from tenants.models import BillingMode
from tests.factories import TenantFactory
from tests.metering.conftest import make_event, tenant_stream

pytestmark = pytest.mark.django_db(transaction=True)


def _consume(redis_client, until_records: int, letters: int = 1, timeout: float = 10.0) -> None:
    consumer = UsageConsumer(client=redis_client, name="dead-letter-test", after_batch=lambda _: None)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        consumer.run(until=time.monotonic() + 0.1, block_ms=20)
        if UsageRecord.objects.count() >= until_records and redis_client.xlen(DEAD_LETTER_STREAM) >= letters:
            return


def _overflowing(tenant_id: int, request_id: str) -> UsageEvent:
    """Storable field by field, yet the ledger cannot hold it: its charge pushes the postpaid tenant's
    spent balance past PostgreSQL's bigint (an event no edge can repair without knowing the price)."""
    event = make_event(tenant_id, request_id=request_id)
    return dataclasses.replace(event, prices=None, cost_micros=0, charge_micros=BIGINT_MAX)


@pytest.fixture
def postpaid():
    tenant = TenantFactory(slug="postpaid", billing_mode=BillingMode.POSTPAID)
    usage_ingest(events=[make_event(tenant.pk, request_id="req_before")])  # its spent balance is above 0 now
    return tenant


def test_one_unbookable_entry_among_many_is_dead_lettered_and_the_rest_is_booked(tenant, postpaid, redis_client):
    balance_topup(tenant=tenant, amount_micros=50_000_000, idempotency_key="topup:dl", source="stripe")
    good = [make_event(tenant.pk) for _ in range(40)]
    poison = _overflowing(postpaid.pk, "req_poison")
    for event in [*good[:23], poison, *good[23:]]:  # one batch: the consumer reads up to 500 at once
        redis_client.xadd(tenant_stream(event.tenant_id), {"e": event.to_json()})

    _consume(redis_client, until_records=41)

    assert set(UsageRecord.objects.values_list("request_id", flat=True)) == {e.request_id for e in good} | {
        "req_before"
    }
    assert tenant_account_balance(tenant_id=tenant.pk) == 50_000_000 - sum(e.charge_micros for e in good)
    assert not Journal.objects.filter(key="usage:req_poison").exists()
    [letter] = dead_letters_list(redis_client)
    assert letter.request_id == "req_poison" and letter.payload == poison.to_json()
    assert "out of range" in letter.error and letter.source_stream == tenant_stream(postpaid.pk)
    assert dead_letters_total(redis_client) == 1
    assert redis_client.xpending(tenant_stream(tenant.pk), USAGE_GROUP)["pending"] == 0  # nothing stuck


def test_a_repaired_letter_is_booked_once_by_the_replay(postpaid, redis_client):
    redis_client.xadd(tenant_stream(postpaid.pk), {"e": _overflowing(postpaid.pk, "req_fixme").to_json()})
    _consume(redis_client, until_records=1)
    [letter] = dead_letters_list(redis_client)
    spent = tenant_account_balance(tenant_id=postpaid.pk, kind=AccountKind.SPENT)

    assert dead_letters_replay(redis_client).failed[0][0] == letter.dead_id  # still unbookable: kept
    repaired = dead_letter_repair(redis_client, dead_id=letter.dead_id, changes={"charge_micros": 1_234})
    out = StringIO()
    call_command("usage_dead_letters", "replay", stdout=out)
    assert "booked 1" in out.getvalue()
    assert tenant_account_balance(tenant_id=postpaid.pk, kind=AccountKind.SPENT) == spent + 1_234
    assert dead_letters_list(redis_client) == []

    again = dead_letters_replay(redis_client)
    assert (again.booked, again.already, again.failed) == ([], [], [])
    redis_client.xadd(DEAD_LETTER_STREAM, {"e": repaired.payload or b"", "error": "written twice by a crash"})
    twice = dead_letters_replay(redis_client)  # the same event set aside twice still books once
    assert (twice.booked, twice.already) == ([], ["req_fixme"])
    assert tenant_account_balance(tenant_id=postpaid.pk, kind=AccountKind.SPENT) == spent + 1_234
    assert Journal.objects.filter(key="usage:req_fixme").count() == 1


def test_garbage_and_unknown_tenants_are_kept_not_dropped(tenant, redis_client):
    redis_client.xadd(tenant_stream(tenant.pk), {"e": b"{not json"})
    redis_client.xadd(tenant_stream(tenant.pk), {"e": make_event(10**9, request_id="req_nobody").to_json()})
    redis_client.xadd(tenant_stream(tenant.pk), {"e": make_event(tenant.pk).to_json()})
    _consume(redis_client, until_records=1, letters=2)
    letters = dead_letters_list(redis_client)
    assert [(bool(letter.payload), letter.request_id) for letter in letters] == [(True, ""), (True, "req_nobody")]
    assert letters[1].error == "unknown_tenant"
    dead_letter_repair(redis_client, dead_id=letters[1].dead_id, changes={"tenant_id": tenant.pk})
    assert dead_letters_replay(redis_client).booked == ["req_nobody"]


@pytest.mark.parametrize(
    "field,value",
    [("model", "deepseek-v3.2\x00"), ("route_reason", "alias:\x00;cheapest"), ("error_code", "e" * 500),
     ("finish_reason", "stop\x00\x00"), ("request_id", "req_" + "x" * 200)],
)  # fmt: skip
def test_values_postgresql_refuses_are_made_storable_at_the_edge(tenant, redis_client, field, value):
    """What the gateway writes is storable already (it calls the same function); an event from anywhere else
    is made storable where metering reads it, so it is booked, never stuck, never dead-lettered."""
    redis_client.xadd(tenant_stream(tenant.pk), {"e": make_event(tenant.pk, **{field: value}).to_json()})
    _consume(redis_client, until_records=1, letters=0, timeout=3)
    [record] = UsageRecord.objects.all()
    stored = getattr(record, field)
    assert "\x00" not in stored and len(stored) <= TEXT_COLUMNS[field] and stored.replace("\ufffd", "")
    assert Journal.objects.filter(key=f"usage:{record.request_id}").count() == 1
    assert not redis_client.exists(DEAD_LETTER_STREAM)


def test_a_long_request_id_keeps_its_identity_and_unpaired_surrogates_are_replaced(tenant):
    long_id = "req_" + "y" * 100
    usage_ingest(events=[make_event(tenant.pk, request_id=long_id, model="x\ud800y")])
    usage_ingest(events=[make_event(tenant.pk, request_id=long_id)])  # the same id again: booked once
    [record] = UsageRecord.objects.all()
    assert record.model == "x\ufffdy" and record.request_id.startswith("req_yyy") and len(record.request_id) == 64


def test_text_limits_are_the_usage_record_columns():
    for name, limit in TEXT_COLUMNS.items():
        column = UsageRecord._meta.get_field(name) if name not in ("hold_id", "traceparent") else None
        if column is not None:
            assert column.max_length == limit, name
