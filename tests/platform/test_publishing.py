"""The gateway's Redis state is published from outbox rows written in the transaction of each change.

Transactional tests: commits and rollbacks are real, so the on-commit drain runs (or not) as in production.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apikeys.services import api_key_revoke
from catalog.services import catalog_apply
from contracts import redis_keys
from contracts.catalog_file import parse_catalog
from devtools.ports import free_port
from foundation.redis_client import get_redis
from outbox.models import OutboxRow, Topic
from publishing.drain import outbox_drain, outbox_prune
from publishing.tasks import outbox_drain_task
from tenants.services import tenant_update
from tests.conftest import FIXTURES
from tests.factories import issue_key

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.local_servers]


class Rollback(Exception):
    pass


def _version(redis_client, name):
    return int(redis_client.get(name) or 0)


def _catalog_spec():
    path = FIXTURES / "small.yaml"
    return parse_catalog(path.read_text(encoding="utf-8"), filename=path.name, sim_base_url=settings.SIM_BASE_URL)


def _revoke(tenant, api_key):
    api_key_revoke(key=api_key)


def _limits(tenant, api_key):
    tenant_update(tenant=tenant, rpm_limit=7)


def _catalog(tenant, api_key):
    catalog_apply(spec=_catalog_spec())


@pytest.mark.parametrize(
    ("change", "topic", "version_key"),
    [
        (_revoke, Topic.KEY, redis_keys.KEYS_VERSION),
        (_limits, Topic.TENANT_KEYS, redis_keys.KEYS_VERSION),
        (_catalog, Topic.CATALOG, redis_keys.CATALOG_VERSION),
    ],
)
def test_a_change_writes_its_outbox_row_in_its_own_transaction(tenant, redis_client, change, topic, version_key):
    api_key, _ = issue_key(tenant)
    rows_before = OutboxRow.objects.count()
    version_before = _version(redis_client, version_key)

    with pytest.raises(Rollback), transaction.atomic():
        change(tenant, api_key)
        assert OutboxRow.objects.filter(topic=topic, published_at__isnull=True).count() == 1  # seen inside
        raise Rollback
    assert OutboxRow.objects.count() == rows_before  # rolled back with the change
    assert _version(redis_client, version_key) == version_before  # and nothing was published
    tenant.refresh_from_db()  # the services set the new values on the instances; the rows kept the old ones
    api_key.refresh_from_db()

    change(tenant, api_key)  # committed: its row is published by the on-commit drain
    row = OutboxRow.objects.filter(topic=topic).latest("id")
    assert row.published_at is not None and row.attempts == 0
    assert _version(redis_client, version_key) == version_before + 1


def test_the_drain_publishes_each_row_exactly_once(tenant, redis_client):
    api_key, _ = issue_key(tenant)
    assert redis_client.exists(redis_keys.key_record(api_key.key_hash))
    version = _version(redis_client, redis_keys.KEYS_VERSION)
    api_key_revoke(key=api_key)
    assert not redis_client.exists(redis_keys.key_record(api_key.key_hash))
    assert _version(redis_client, redis_keys.KEYS_VERSION) == version + 1
    assert outbox_drain() == 0  # the periodic drain finds nothing left
    assert outbox_drain_task() == 0
    assert _version(redis_client, redis_keys.KEYS_VERSION) == version + 1
    assert not OutboxRow.objects.filter(published_at__isnull=True).exists()


def test_rows_publishing_the_same_thing_are_published_once_per_drain(tenant, redis_client):
    issue_key(tenant)
    version = _version(redis_client, redis_keys.KEYS_VERSION)
    with transaction.atomic():
        for rpm in (5, 6, 7):
            tenant_update(tenant=tenant, rpm_limit=rpm)
    assert _version(redis_client, redis_keys.KEYS_VERSION) == version + 1  # three rows, one publish
    assert OutboxRow.objects.filter(topic=Topic.TENANT_KEYS, published_at__isnull=False).count() == 3


def test_a_balance_adjustment_moves_the_counter_once_even_when_drained_again(tenant, redis_client):
    counter = redis_keys.tenant_available(tenant.pk)
    redis_client.set(counter, 1_000)
    tenant_update(tenant=tenant, billing_mode="postpaid", credit_limit_micros=5_000)
    assert int(redis_client.get(counter)) == 6_000
    row = OutboxRow.objects.get(topic=Topic.BALANCE_ADJUST)
    OutboxRow.objects.filter(pk=row.pk).update(published_at=None)  # as if a crash came before the commit
    assert outbox_drain() == 1
    assert int(redis_client.get(counter)) == 6_000


def test_publishing_survives_a_redis_outage_by_retrying(tenant, redis_client, settings):
    api_key, _ = issue_key(tenant)
    record = redis_keys.key_record(api_key.key_hash)
    real_url = settings.REDIS_URL
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens: connections are refused
    get_redis.cache_clear()
    try:
        api_key_revoke(key=api_key)  # the change commits; publishing it fails, the caller is not failed
        pending = OutboxRow.objects.get(topic=Topic.KEY, key_id=api_key.pk, published_at__isnull=True)
        assert pending.attempts == 1 and "refused" in pending.last_error.lower()
        assert outbox_drain_task() == 0  # still down: the row stays pending
        assert OutboxRow.objects.get(pk=pending.pk).attempts == 2
    finally:
        settings.REDIS_URL = real_url
        get_redis.cache_clear()
    assert redis_client.exists(record)  # the gateway still has the old record
    assert outbox_drain_task() == 1  # Redis is back: the periodic drain publishes it
    assert not redis_client.exists(record)
    assert OutboxRow.objects.get(pk=pending.pk).published_at is not None


def test_published_rows_are_pruned_after_a_week_and_pending_ones_never(tenant, redis_client):
    api_key, _ = issue_key(tenant)
    published = OutboxRow.objects.get(topic=Topic.KEY, key_id=api_key.pk)
    week_ago = timezone.now() - dt.timedelta(days=7, minutes=1)
    OutboxRow.objects.filter(pk=published.pk).update(published_at=week_ago)
    pending = OutboxRow.objects.create(topic=Topic.CATALOG)
    OutboxRow.objects.filter(pk=pending.pk).update(created_at=week_ago)
    assert outbox_prune() == 1
    assert list(OutboxRow.objects.values_list("pk", flat=True)) == [pending.pk]
