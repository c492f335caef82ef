"""CSV exports from the console: usage per day/model/provider/key and the request log, the tenant's
charge only (the provider's cost never appears), rejected calls included, bad group a 400."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from metering.models import UsageRecord
from tests.frontend.site import REQUEST_OK, REQUEST_REJECTED, populate

pytestmark = pytest.mark.django_db


def _rows(response) -> list[dict[str, str]]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.fixture
def owner(personas, catalog, redis_client) -> Client:
    populate(personas, catalog)
    client = Client()
    client.force_login(personas.owner)
    return client


def test_usage_by_model_is_the_tenant_charge_to_the_micro(owner):
    record = UsageRecord.objects.get(request_id=REQUEST_OK)
    assert 0 < record.cost_micros < record.charge_micros  # a markup: the two amounts differ
    rows = _rows(owner.get("/console/acme/usage/", {"format": "csv", "group": "model"}))
    by_model = {r["model"]: r for r in rows}
    assert by_model["deepseek-v4-flash"]["charge_usd"] == f"{record.charge_micros / 1_000_000:.6f}"
    assert not any("cost" in column for column in rows[0])
    assert f"{record.cost_micros / 1_000_000:.6f}" not in str(rows)
    for group in ("day", "provider", "key"):
        assert _rows(owner.get("/console/acme/usage/", {"format": "csv", "group": group}))


def test_request_log_lists_rejected_calls(owner):
    rows = _rows(owner.get("/console/acme/requests/", {"format": "csv"}))
    by_id = {r["id"]: r for r in rows}
    assert by_id[REQUEST_REJECTED]["status"] == "rejected" and by_id[REQUEST_REJECTED]["http_status"] == "429"
    assert (
        by_id[REQUEST_REJECTED]["error_code"] == "key_rate_limited"
        and by_id[REQUEST_REJECTED]["charge_usd"] == "0.000000"
    )
    assert list(by_id) == [REQUEST_REJECTED, REQUEST_OK]  # newest first


def test_unknown_group_is_a_400(owner):
    response = owner.get("/console/acme/usage/", {"format": "csv", "group": "planet"})
    assert response.status_code == 400 and b"day, model, provider, key" in response.content


def test_a_key_name_is_never_a_spreadsheet_formula(owner, personas):
    from apikeys.models import ApiKey

    ApiKey.objects.filter(tenant=personas.tenant).update(name='=HYPERLINK("http://evil.test")')
    rows = _rows(owner.get("/console/acme/usage/", {"format": "csv", "group": "key"}))
    assert rows and all(r["key"].startswith("'=HYPERLINK") for r in rows)
