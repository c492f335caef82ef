"""A Redis that came back without its data gets keys, balances, catalog and statistics back from the
database, then the marker the gateway watches (tokenway.state_rebuild, beat every 2 s)."""

from __future__ import annotations

import pytest
from django.conf import settings

from contracts import redis_keys
from contracts.apikey_format import hash_key
from tests.factories import issue_key
from tokenway.beat import BEAT_SCHEDULE
from tokenway.state_rebuild import redis_state_ensure
from tokenway.tasks import redis_state_check_task

pytestmark = pytest.mark.local_servers


@pytest.mark.django_db
def test_an_emptied_redis_is_republished_then_marked(tenant, redis_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        _, plaintext = issue_key(tenant)
    redis_client.flushdb()  # the restart without persistence
    assert redis_state_ensure() is True
    assert redis_client.get(redis_keys.key_record(hash_key(plaintext, settings.API_KEY_PEPPER))) is not None
    assert redis_client.get(redis_keys.tenant_available(tenant.pk)) is not None
    assert redis_client.get(redis_keys.CATALOG_SNAPSHOT) is not None
    assert redis_client.get(redis_keys.STATS_SNAPSHOT) is not None
    assert redis_client.get(redis_keys.STATE_MARKER) is not None


@pytest.mark.django_db
def test_with_the_marker_present_nothing_is_published(tenant, redis_client):
    redis_client.set(redis_keys.STATE_MARKER, "boot")
    assert redis_state_check_task() is False  # the task beat runs: one EXISTS
    assert redis_client.get(redis_keys.CATALOG_VERSION) is None


def test_beat_checks_every_two_seconds():
    entry = BEAT_SCHEDULE["tokenway.redis_state_check"]
    assert entry["task"] == "tokenway.tasks.redis_state_check" and entry["schedule"] <= 2.0
