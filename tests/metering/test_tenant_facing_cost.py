"""Tenants see what they are charged, never the provider's cost or our margin; staff still see both."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from frontend.data.metering import usage_breakdown
from metering.ingest import usage_ingest
from tests.factories import issue_key
from tests.metering.conftest import make_event

pytestmark = pytest.mark.django_db
COST_FIELDS = ("cost_micros", "provider_cost_micros", "margin_micros", "cost")


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


@pytest.fixture
def billed(tenant):
    tenant.billing_mode = "postpaid"
    tenant.save()
    key, plaintext = issue_key(tenant, name="app")
    usage_ingest(events=[make_event(tenant.pk, key.pk, request_id="req_cost", markup_bps=2_000)])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def test_the_generation_record_shows_the_charge_not_the_provider_cost(billed):
    body = billed.get("/api/v1/generation", {"id": "req_cost"}).json()
    assert body["charge_micros"] == 6_240
    assert not _keys(body) & set(COST_FIELDS)
    listed = billed.get("/api/v1/generations").json()
    assert [item["id"] for item in listed["data"]] == ["req_cost"]
    assert not _keys(listed) & set(COST_FIELDS)


def test_usage_api_and_csv_show_the_charge_not_the_provider_cost(billed, owner, api_client_for):
    client = api_client_for(owner)
    body = client.get("/api/v1/tenants/acme/usage/", {"group": "model"}).json()
    assert body["data"][0]["charge_micros"] == 6_240
    assert not _keys(body) & set(COST_FIELDS)
    csv = client.get("/api/v1/tenants/acme/usage.csv", {"group": "model"}).content.decode()
    header = csv.splitlines()[0].split(",")
    assert "charge_micros" in header and not set(header) & set(COST_FIELDS)
    tenant_list = client.get("/api/v1/tenants/acme/generations/").json()
    assert not _keys(tenant_list) & set(COST_FIELDS)


def test_console_usage_page_carries_no_provider_cost_but_the_ops_data_does(billed, owner, client):
    client.force_login(owner.user)
    page = client.get(reverse("frontend:usage", args=["acme"]))
    assert page.status_code == 200
    data = page.context["usage"]
    assert data["totals"]["charge"] == 6_240
    assert not _keys(data) & set(COST_FIELDS)
    detail = client.get(reverse("frontend:request", args=["acme", "req_cost"]))
    assert detail.status_code == 200 and b"cost_micros" not in detail.content
    staff = usage_breakdown(tenant_id=None, days=30)
    assert staff["totals"]["cost"] == 5_200 and staff["by_day"][0]["cost"] == 5_200  # staff keep the margin view
