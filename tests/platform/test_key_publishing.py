from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from apikeys.models import ApiKey
from apikeys.selectors import usable_key_for_plaintext
from apikeys.services import api_key_revoke, api_key_rotate, api_key_update_limits
from contracts import redis_keys
from contracts.apikey_format import hash_key, is_well_formed
from contracts.keyrecord import KeyRecord
from credentials.services import credential_create
from publishing.keys import publish_all_keys
from tenants.services import tenant_update
from tests.factories import ProviderFactory, issue_key

pytestmark = pytest.mark.local_servers


def _record(redis_client, plaintext):
    raw = redis_client.get(redis_keys.key_record(hash_key(plaintext, settings.API_KEY_PEPPER)))
    return None if raw is None else KeyRecord.from_json(raw)


def _version(redis_client):
    return int(redis_client.get(redis_keys.KEYS_VERSION) or 0)


@pytest.mark.django_db
def test_issue_publishes_the_record_after_commit(tenant, redis_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        api_key, plaintext = issue_key(tenant, rpm_limit=60, monthly_budget_micros=5_000_000)
    record = _record(redis_client, plaintext)
    assert record is not None
    assert (record.key_id, record.tenant_slug, record.key_limits.rpm, record.monthly_budget_micros) == (
        api_key.pk,
        "acme",
        60,
        5_000_000,
    )
    assert _version(redis_client) == 1
    assert plaintext not in repr(api_key) and plaintext not in str(api_key)


@pytest.mark.django_db
def test_revocation_removes_the_record_and_bumps_the_version(tenant, redis_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        api_key, plaintext = issue_key(tenant)
    pubsub = redis_client.pubsub()
    pubsub.subscribe(redis_keys.KEYS_CHANNEL)
    pubsub.get_message(timeout=1)
    with django_capture_on_commit_callbacks(execute=True):
        api_key_revoke(key=api_key)
    assert _record(redis_client, plaintext) is None
    assert _version(redis_client) == 2
    message = pubsub.get_message(timeout=1)
    assert message["data"].decode() == api_key.key_hash
    assert usable_key_for_plaintext(plaintext, pepper=settings.API_KEY_PEPPER) is None


@pytest.mark.django_db
def test_rotation_keeps_the_old_key_until_grace_then_refuses(tenant, redis_client, django_capture_on_commit_callbacks):
    old, old_plain = issue_key(tenant, rpm_limit=10)
    grace = timezone.now() + timedelta(minutes=5)
    with django_capture_on_commit_callbacks(execute=True):
        issued = api_key_rotate(key=old, grace_until=grace)
    assert issued.api_key.rpm_limit == 10 and issued.api_key.rotated_from_id == old.pk
    assert usable_key_for_plaintext(old_plain, pepper=settings.API_KEY_PEPPER) == old
    assert usable_key_for_plaintext(issued.plaintext, pepper=settings.API_KEY_PEPPER) == issued.api_key
    record = _record(redis_client, old_plain)
    assert record.expires_at == pytest.approx(grace.timestamp())
    assert 0 < redis_client.ttl(redis_keys.key_record(old.key_hash)) <= 300
    ApiKey.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert usable_key_for_plaintext(old_plain, pepper=settings.API_KEY_PEPPER) is None
    publish_all_keys()
    assert _record(redis_client, old_plain) is None
    assert _record(redis_client, issued.plaintext) is not None


@pytest.mark.django_db
def test_limit_update_and_tenant_settings_republish(tenant, redis_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        api_key, plaintext = issue_key(tenant)
        api_key_update_limits(key=api_key, tpm_limit=1000, max_concurrency=2)
    assert _record(redis_client, plaintext).key_limits.tpm == 1000
    with django_capture_on_commit_callbacks(execute=True):
        tenant_update(tenant=tenant, markup_bps=250, rpm_limit=99, billing_mode="postpaid")
    record = _record(redis_client, plaintext)
    assert (record.markup_bps, record.tenant_limits.rpm, record.postpaid) == (250, 99, True)


@pytest.mark.django_db
def test_byok_credential_reaches_the_key_record_encrypted(tenant, redis_client, django_capture_on_commit_callbacks):
    provider = ProviderFactory(slug="deepseek")
    with django_capture_on_commit_callbacks(execute=True):
        _, plaintext = issue_key(tenant)
        credential_create(
            tenant=tenant, provider=provider, secret="sk-tenant-secret-1234", base_url="http://localhost:8100/v1"
        )
    record = _record(redis_client, plaintext)
    assert set(record.byok) == {"deepseek"}
    assert record.byok_base_urls == {"deepseek": "http://localhost:8100/v1"}
    assert "sk-tenant-secret" not in record.byok["deepseek"]


@pytest.mark.django_db
def test_publish_all_prunes_stale_records(tenant, redis_client):
    redis_client.set(redis_keys.key_record("f" * 64), b"{}")
    _, plaintext = issue_key(tenant)
    publish_all_keys()
    assert redis_client.get(redis_keys.key_record("f" * 64)) is None
    assert _record(redis_client, plaintext) is not None


@pytest.mark.django_db
def test_create_api_key_command_prints_only_the_key(tenant, redis_client, django_capture_on_commit_callbacks):
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("create_api_key", "--tenant", "acme", "--name", "ci", stdout=out)
    key = out.getvalue().strip()
    assert is_well_formed(key)
    assert out.getvalue() == key + "\n"
    assert ApiKey.objects.get(tenant=tenant).name == "ci"
    assert _record(redis_client, key) is not None
