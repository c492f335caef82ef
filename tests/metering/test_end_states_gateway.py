"""End states to the ledger, through the real gateway, the simulated providers, Redis, the metering
consumer and PostgreSQL: the record and the journal of a completed, an abandoned and a cut stream, and the
generation record's reasoning, finish reason and provider response id as the tenant's API shows them."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import anthropic
import pytest
from rest_framework.test import APIClient

from metering.consumer import UsageConsumer
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, JournalLine, UsageRecord
from metering.reconcile import check_usage_has_journal
from metering.services import balance_topup, tenant_available_ensure
from tests.factories import issue_key
from tests.routing.conftest import add_fault, gateway, gateway_server, sim, sim_requests  # noqa: F401 - fixtures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster]
TOPUP = 5_000_000
MSG = [{"role": "user", "content": "Think about caches, then tell me a story about them."}]
ONLY = {"provider": {"only": ["anthropic"]}}


def _ingest(redis_client, expected: int) -> None:
    consumer = UsageConsumer(client=redis_client, name="end-states-test", after_batch=lambda _: None)
    deadline = time.monotonic() + 10
    while UsageRecord.objects.count() < expected and time.monotonic() < deadline:
        consumer.run(until=time.monotonic() + 0.3, block_ms=50)
    assert UsageRecord.objects.count() == expected


def _booked(request_id: str) -> int:
    line = JournalLine.objects.get(journal__key=f"usage:{request_id}", account__kind=AccountKind.PROVIDER_COST)
    return line.amount_micros


def _billed(sim_handle: Any) -> int:
    return sim_requests(sim_handle, "anthropic", 1)[0]["sim"]["billed_cost_micros"]


def _abandon(port: int, key: str) -> str:
    """Start an Anthropic stream with a bare socket, read a few events, hang up; the request id."""
    body = json.dumps({"model": "claude-haiku-4.5", "max_tokens": 300, "messages": MSG, "stream": True, **ONLY})
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    head = f"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: {key}\r\ncontent-type: application/json\r\n"
    sock.sendall(f"{head}content-length: {len(body)}\r\n\r\n{body}".encode())
    received = b""
    while received.count(b"content_block_delta") < 2:
        received += sock.recv(65536)
    sock.close()
    return next(
        line.split(b":", 1)[1].strip().decode()
        for line in received.split(b"\r\n")
        if line.lower().startswith(b"request-id:")
    )


def test_completed_abandoned_and_cut_streams_reach_the_books_as_priced(gateway, sim, tenant, redis_client):  # noqa: F811
    balance_topup(tenant=tenant, amount_micros=TOPUP, idempotency_key="topup:end-states-gw", source="stripe")
    tenant_available_ensure(tenant=tenant)
    _, plaintext = issue_key(tenant, name="app")
    claude = anthropic.Anthropic(base_url=gateway.base_url, api_key=plaintext, max_retries=0, timeout=20)

    with claude.messages.stream(
        model="claude-sonnet-4.5",
        max_tokens=2000,
        messages=MSG,
        thinking={"type": "enabled", "budget_tokens": 1024},
        extra_body=ONLY,
    ) as stream:
        final = stream.get_final_message()
        completed_id = stream.response.headers["request-id"]
    completed_billed, thinking = _billed(sim), sim_requests(sim, "anthropic", 1)[0]["sim"]["reported_usage"]

    add_fault(sim, provider="anthropic", kind="stall_mid_stream", count=1, stall_s=100)  # leaves mid-answer
    abandoned_id = _abandon(gateway.port, plaintext)
    _ingest(redis_client, 2)  # the abandoned stream's event comes once the provider's answer was read to its end
    abandoned_billed = _billed(sim)

    add_fault(sim, provider="anthropic", kind="stream_cut", count=1)
    with (
        pytest.raises(anthropic.APIError),
        claude.messages.stream(model="claude-haiku-4.5", max_tokens=200, messages=MSG, extra_body=ONLY) as cut,
    ):
        for _ in cut:
            pass
    _ingest(redis_client, 3)

    records = {r.request_id: r for r in UsageRecord.objects.all()}
    done, left = records[completed_id], records[abandoned_id]
    [cut_record] = [r for rid, r in records.items() if rid not in (completed_id, abandoned_id)]
    assert (done.end_state, left.end_state, cut_record.end_state) == ("completed", "client_cancelled", "upstream_cut")
    assert _booked(completed_id) == completed_billed and _booked(abandoned_id) == abandoned_billed
    assert left.charge_micros > 0 and cut_record.charge_micros == 0 and _booked(cut_record.request_id) > 0
    assert tenant_account_balance(tenant_id=tenant.pk) == TOPUP - done.charge_micros - left.charge_micros
    assert check_usage_has_journal() == []

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    record = api.get("/api/v1/generation", {"id": completed_id}).json()
    assert record["tokens"]["reasoning"] == thinking["reasoning"] > 0
    assert (record["end_state"], record["finish_reason"]) == ("completed", final.stop_reason)
    assert record["upstream_id"].startswith("msg_") and "cost_micros" not in record
