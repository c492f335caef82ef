"""Model family fallback as a tenant and key setting, end to end: the API sets it, publishing puts it
in the key record, the real gateway serves an unknown version of a known family by the family's newest
model only when it is on, says so in ``x-tokenway-route``, and the per-request record
(``GET /api/v1/generation``) names the model asked for beside the model that served."""

from __future__ import annotations

from io import StringIO
from typing import Any

import anthropic
import pytest
import redis
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from apikeys.models import ApiKey
from apikeys.services import api_key_rotate
from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord
from metering.services import balance_topup, tenant_available_ensure
from tests.factories import issue_key
from tests.routing.conftest import gateway, gateway_server, sim  # noqa: F401 - the gateway fixtures
from tests.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.adversarial]

HI: list[Any] = [{"role": "user", "content": "Say hi"}]
TENANT_URL = "/api/v1/tenants/acme/"


def _record(redis_client: redis.Redis, key: ApiKey) -> KeyRecord:
    raw = redis_client.get(rk.key_record(key.key_hash))
    assert raw is not None
    return KeyRecord.from_json(raw)


def _claude(gateway, plaintext: str) -> anthropic.Anthropic:  # noqa: F811 - the fixture's value
    return anthropic.Anthropic(base_url=gateway.base_url, api_key=plaintext, max_retries=0, timeout=20)


def _generation(plaintext: str, request_id: str) -> dict:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    response = client.get("/api/v1/generation", {"id": request_id})
    assert response.status_code == 200, response.content
    return response.json()


def test_the_tenant_setting_reaches_the_gateway_and_a_key_may_override_it(
    gateway,  # noqa: F811 - the fixture
    owner,
    api_client_for,
    redis_client,
):
    tenant = owner.tenant
    balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="topup:family", source="stripe")
    tenant_available_ensure(tenant=tenant)
    inherits, inherits_plain = issue_key(tenant, name="inherits")
    strict, strict_plain = issue_key(tenant, name="strict", model_family_fallback=False)
    assert _record(redis_client, inherits).model_family_fallback is False

    with pytest.raises(anthropic.NotFoundError):  # off by default: the model asked for, or a 404
        _claude(gateway, inherits_plain).messages.create(model="claude-opus-99-99", max_tokens=20, messages=HI)

    response = api_client_for(owner).patch(TENANT_URL, {"model_family_fallback": True}, format="json")
    assert response.status_code == 200 and response.json()["model_family_fallback"] is True
    wait_until(lambda: _record(redis_client, inherits).model_family_fallback, timeout=3, message="not republished")
    assert _record(redis_client, strict).model_family_fallback is False  # the key's own setting wins

    wait_until(lambda: _served(gateway, inherits_plain), timeout=3, message="the gateway kept the old record")
    raw = _claude(gateway, inherits_plain).messages.with_raw_response.create(
        model="claude-opus-99-99", max_tokens=20, messages=HI
    )
    assert raw.parse().model == "claude-opus-4.1"
    assert raw.headers["x-tokenway-route"].startswith("family:claude-opus-99-99->claude-opus-4.1;")
    record = _generation(inherits_plain, raw.headers["x-request-id"])
    assert (record["model"], record["requested_model"], record["model_resolution"]) == (
        "claude-opus-4.1",
        "claude-opus-99-99",
        "family",
    )
    with pytest.raises(anthropic.NotFoundError):
        _claude(gateway, strict_plain).messages.create(model="claude-opus-99-99", max_tokens=20, messages=HI)


def _served(gateway, plaintext: str) -> bool:  # noqa: F811
    try:
        _claude(gateway, plaintext).messages.create(model="claude-haiku-9-9", max_tokens=5, messages=HI)
    except anthropic.NotFoundError:
        return False
    return True


def test_the_generation_record_names_an_alias_and_a_slug_as_asked(gateway, tenant, redis_client):  # noqa: F811
    balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="topup:alias", source="stripe")
    tenant_available_ensure(tenant=tenant)
    _, plaintext = issue_key(tenant, name="k")
    client = _claude(gateway, plaintext)
    alias = client.messages.with_raw_response.create(model="haiku", max_tokens=20, messages=HI)
    slug = client.messages.with_raw_response.create(model="claude-haiku-4.5", max_tokens=20, messages=HI)
    for raw, asked, kind in ((alias, "haiku", "alias"), (slug, "claude-haiku-4.5", "slug")):
        record = _generation(plaintext, raw.headers["x-request-id"])
        assert (record["model"], record["requested_model"], record["model_resolution"]) == (
            "claude-haiku-4.5",
            asked,
            kind,
        )


def test_rotation_keeps_the_keys_own_setting(tenant):
    key, _ = issue_key(tenant, name="k", model_family_fallback=True)
    rotated = api_key_rotate(key=key, grace_until=timezone.now())
    assert rotated.api_key.model_family_fallback is True


def test_create_api_key_may_opt_the_key_in(tenant):
    out = StringIO()
    call_command("create_api_key", "--tenant", tenant.slug, "--name", "agent", "--model-family-fallback", stdout=out)
    agent = ApiKey.objects.get(name="agent")
    assert agent.model_family_fallback is True and out.getvalue().strip().startswith(agent.prefix)
    call_command("create_api_key", "--tenant", tenant.slug, "--name", "plain", stdout=StringIO())
    assert ApiKey.objects.get(name="plain").model_family_fallback is None  # the organisation's setting
