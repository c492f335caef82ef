"""``manage.py demo_credit``: the demo's $50 through the ledger, once, and the gateway's counter moves with it
(``make run`` runs it after ``seed_demo``, which no longer reaches into metering)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from contracts import redis_keys
from metering.ledger import tenant_account_balance
from metering.services import DEMO_CREDIT_MICROS


def _credit(slug: str) -> str:
    out = StringIO()
    call_command("demo_credit", "--tenant", slug, stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_demo_credit_is_given_once_and_reaches_the_gateways_counter(tenant, redis_client):
    assert "credited tenant 'acme'" in _credit("acme")
    assert "already credited" in _credit("acme")
    assert tenant_account_balance(tenant_id=tenant.pk) == DEMO_CREDIT_MICROS
    assert int(redis_client.get(redis_keys.tenant_available(tenant.pk))) == DEMO_CREDIT_MICROS


@pytest.mark.django_db
def test_an_unknown_tenant_is_refused_and_nothing_is_credited(tenant, redis_client):
    with pytest.raises(CommandError, match="no tenant 'nope'"):
        _credit("nope")
    assert tenant_account_balance(tenant_id=tenant.pk) == 0
