from __future__ import annotations

from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command

from accounts.models import User
from apikeys.models import ApiKey
from apikeys.services import api_key_revoke
from contracts import redis_keys
from contracts.apikey_format import hash_key
from tenants.models import Membership, Tenant


@pytest.fixture
def data_dir(tmp_path, settings):
    settings.DATA_DIR = tmp_path
    return tmp_path


def _seed():
    call_command("seed_demo", stdout=StringIO())


@pytest.mark.django_db
def test_seed_demo_is_idempotent_and_reuses_a_valid_key(data_dir, redis_client):
    _seed()
    key = (data_dir / "demo-api-key").read_text().strip()
    _seed()
    assert (data_dir / "demo-api-key").read_text().strip() == key
    assert ApiKey.objects.count() == 1
    assert Tenant.objects.get(slug="demo").name == "Demo"
    demo = User.objects.get(email="demo@tokenway.local")
    assert demo.check_password("demo-password-123")
    assert Membership.objects.get(user=demo).role == "owner"
    assert User.objects.get(email="admin@tokenway.local").is_superuser
    assert redis_client.get(redis_keys.key_record(hash_key(key, settings.API_KEY_PEPPER))) is not None
    assert redis_client.get(redis_keys.CATALOG_SNAPSHOT) is not None


@pytest.mark.django_db
def test_seed_demo_issues_a_new_key_when_the_old_one_was_revoked(data_dir, redis_client):
    _seed()
    api_key_revoke(key=ApiKey.objects.get())
    _seed()
    assert ApiKey.objects.filter(revoked_at__isnull=True).count() == 1
    key = (data_dir / "demo-api-key").read_text().strip()
    assert ApiKey.objects.get(revoked_at__isnull=True).key_hash == hash_key(key, settings.API_KEY_PEPPER)
