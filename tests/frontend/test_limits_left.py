"""The console shows what is left of each key's monthly budget and of the tenant's monthly spend limit,
counting settled spend and the open holds of calls in flight (the gateway's counters in Redis)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.test import Client

from contracts import redis_keys as rk
from tenants.services import tenant_update
from tests.factories import issue_key

pytestmark = pytest.mark.django_db


def _page(user, path: str) -> str:
    client = Client()
    client.force_login(user)
    return client.get(path).content.decode()


def _month() -> str:
    return datetime.now(tz=UTC).strftime("%Y%m")


def test_the_keys_page_shows_what_is_left_of_each_budget_with_open_holds(personas, redis_client):
    key, _ = issue_key(personas.tenant, name="budgeted", monthly_budget_micros=1_000_000)
    issue_key(personas.tenant, name="unlimited")
    redis_client.set(rk.key_month_spend(personas.tenant.pk, key.pk, _month()), 250_000)
    redis_client.hset(rk.tenant_held(personas.tenant.pk), rk.held_key_field(key.pk), 100_000)
    page = _page(personas.owner, "/console/acme/keys/")
    assert re.findall(r'data-budget-left="(\d+)">\(([^ ]+) left\)', page) == [("650000", "$0.6500")]


def test_the_billing_page_shows_what_is_left_of_the_spend_limit(personas, redis_client):
    assert 'id="spend-limit"' not in _page(personas.owner, "/console/acme/billing/")  # no limit, no card
    tenant_update(tenant=personas.tenant, monthly_spend_limit_micros=5_000_000)
    redis_client.set(rk.tenant_month_spend(personas.tenant.pk, _month()), 1_000_000)
    redis_client.hset(rk.tenant_held(personas.tenant.pk), rk.HELD_TENANT_FIELD, 500_000)
    page = _page(personas.owner, "/console/acme/billing/")
    card = page[page.index('id="spend-limit"') :]
    assert 'data-micros="3500000">$3.500000 left' in card and "$0.500000" in card
