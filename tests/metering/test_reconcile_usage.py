"""``reconcile`` finds a usage journal one micro-unit off its row, an open hold without an expiry entry
and usage set aside or stuck in the pipeline; each finding is absent on sound books."""

from __future__ import annotations

from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from contracts import redis_keys as rk
from contracts.redis_keys import HOLD_EXPIRIES, USAGE_GROUP, USAGE_STREAM, tenant_hold_expiries
from metering.consumer import group_ensure
from metering.dead_letters import DEAD_LETTER_STREAM
from metering.holds import hold_place, hold_settle
from metering.ingest import usage_ingest
from metering.reconcile import check_holds_have_expiry, check_usage_journal_matches_row, check_usage_pipeline
from metering.services import balance_topup, tenant_available_ensure
from tests.metering.conftest import make_event

pytestmark = pytest.mark.django_db(transaction=True)


def _reconcile() -> str:
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("reconcile", stdout=out)
    return out.getvalue()


def _sound_usage(tenant) -> None:
    """Every shape a usage journal takes: paid in full, partly beyond the balance (shortfall), BYOK,
    a hedge loser's provider cost only, and a refused call with no journal."""
    balance_topup(tenant=tenant, amount_micros=10_000, idempotency_key="topup:ru", source="stripe")
    usage_ingest(events=[make_event(tenant.pk), make_event(tenant.pk)])  # the second goes beyond: shortfall
    usage_ingest(
        events=[
            make_event(tenant.pk, byok=True),
            make_event(tenant.pk, charge_micros=0),
            make_event(tenant.pk, status="rejected", charge_micros=0),
        ]
    )


def test_a_usage_journal_one_micro_unit_off_its_row_is_found(tenant, redis_client):
    _sound_usage(tenant)
    assert check_usage_journal_matches_row() == []
    event = make_event(tenant.pk, request_id="req_off_by_one")
    usage_ingest(events=[event])
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE metering_usagerecord SET charge_micros = charge_micros + 1 WHERE request_id = %s",
            ["req_off_by_one"],
        )
    [finding] = check_usage_journal_matches_row()
    assert finding.subject == "usage:req_off_by_one"
    assert finding.detail["charge"] == event.charge_micros + 1 == finding.detail["journal_spent"] + 1
    assert "\tusage_journal_mismatch\tusage:req_off_by_one\t" in _reconcile()


def test_an_open_hold_without_its_expiry_entry_is_found(tenant, redis_client):
    tenant_available_ensure(tenant=tenant)
    balance_topup(tenant=tenant, amount_micros=1_000_000, idempotency_key="topup:hold", source="stripe")
    redis_client.incrby(f"tw:{{t{tenant.pk}}}:avail", 1_000_000)
    assert hold_place(redis_client, tenant_id=tenant.pk, hold_id="h_kept", amount_micros=500, ttl_s=60)
    assert hold_place(redis_client, tenant_id=tenant.pk, hold_id="h_lost", amount_micros=700, ttl_s=60)
    assert check_holds_have_expiry() == []
    redis_client.zrem(tenant_hold_expiries(tenant.pk), f"{tenant.pk}:h_lost")
    [finding] = check_holds_have_expiry()
    assert (finding.check, finding.subject, finding.detail) == (
        "hold_without_expiry",
        f"tenant:{tenant.pk}:hold:h_lost",
        {"held_micros": 700},
    )
    assert f"\thold_without_expiry\ttenant:{tenant.pk}:hold:h_lost\t" in _reconcile()
    redis_client.zadd(HOLD_EXPIRIES, {f"{tenant.pk}:h_lost": 1.0})  # still in the old global index: reaped
    assert check_holds_have_expiry() == []
    assert hold_settle(redis_client, tenant_id=tenant.pk, hold_id="h_lost", charge_micros=0)
    assert check_holds_have_expiry() == []


def test_dead_letters_and_billing_behind_are_found(tenant, redis_client):
    group_ensure(redis_client)  # the consumers' group exists; they are not reading
    assert check_usage_pipeline() == []
    redis_client.xadd(DEAD_LETTER_STREAM, {"e": b"{}", "error": "ValueError: test", "stream": USAGE_STREAM})
    redis_client.xadd(USAGE_STREAM, {"e": replace(make_event(tenant.pk)).to_json()}, id="1000-0")  # from 1970
    found = {finding.check: finding.detail for finding in check_usage_pipeline()}
    assert set(found) == {"usage_dead_lettered", "usage_behind"}
    assert found["usage_behind"]["dead_letters"] == 1 and found["usage_behind"]["undelivered"] == 1
    assert found["usage_behind"]["oldest_unbilled_s"] > 60


def test_an_entry_taken_and_never_acknowledged_is_stuck(tenant, redis_client):
    group_ensure(redis_client)
    entry_id = redis_client.xadd(USAGE_STREAM, {"e": make_event(tenant.pk).to_json()})
    redis_client.xreadgroup(USAGE_GROUP, "a-consumer-that-died", {USAGE_STREAM: ">"}, count=10)
    assert "usage_stuck" not in {finding.check for finding in check_usage_pipeline()}  # taken a moment ago
    redis_client.xclaim(USAGE_STREAM, USAGE_GROUP, "a-consumer-that-died", 0, [entry_id], idle=120_000)  # 2 min idle
    found = {finding.check: finding.detail for finding in check_usage_pipeline()}
    assert found["usage_stuck"]["stuck"] == 1 and found["usage_stuck"]["pending"] == 1


def test_the_pipeline_checks_work_on_a_redis_cluster(cluster_client):
    """Dead letters and their counter, the pipeline state over shards in several slots, and the per-tenant
    MULTI of the hold check (one slot per tenant) on a real 3-master cluster."""
    from metering.books_usage import holds_without_expiry
    from metering.dead_letters import Unbookable, dead_letters_add, dead_letters_list
    from metering.pipeline_health import usage_pipeline_state

    streams = [rk.usage_stream(shard) for shard in range(3)]
    group_ensure(cluster_client, streams)
    dead_letters_add(cluster_client, stream=streams[1], letters=[Unbookable(b"1-0", b"{}", "ValueError: x")] * 2)
    assert [letter.source_stream for letter in dead_letters_list(cluster_client)] == [streams[1]] * 2
    state = usage_pipeline_state(cluster_client, streams)
    assert (state.dead_letters, state.dead_lettered_total, state.stuck) == (2, 2, 0)
    for tenant_id in (1, 2, 3):
        cluster_client.set(rk.tenant_available(tenant_id), 10_000)
        assert hold_place(cluster_client, tenant_id=tenant_id, hold_id="h", amount_micros=10, ttl_s=60)
    cluster_client.zrem(rk.tenant_hold_expiries(2), "2:h")
    assert holds_without_expiry(cluster_client, tenant_ids=[1, 2, 3]) == [(2, "h", 10)]
