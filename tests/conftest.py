"""Shared fixtures: real PostgreSQL (pytest-django) and a real Redis, emptied per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings

FIXTURES = Path(__file__).parent / "platform" / "fixtures"


@pytest.fixture(scope="session", autouse=True)
def _fast_test_plumbing() -> Iterator[None]:
    """What is not under test made cheap: transactional tests end by emptying only the tables that hold
    rows (tests/db_reset.py), and passwords are hashed with MD5, as PBKDF2 at production cost (0.2-0.3 s a
    user on a 2-core machine) dominated the set-up of every test with a member; the hasher is not what they check."""
    from django.test import override_settings

    from tests.db_reset import install

    install()
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture
def redis_client() -> Iterator[redis.Redis]:
    """The data Redis, emptied before and after: a ``redis.RedisCluster`` when the session runs on a
    cluster (its FLUSHDB goes to every master), a plain client otherwise."""
    from foundation.redis_client import client_for, cluster_mode

    cluster = cluster_mode(settings.REDIS_URL, settings.TOKENWAY_REDIS_CLUSTER)
    client = client_for(settings.REDIS_URL, cluster=cluster, timeout_s=None)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    """A real 3-master Redis Cluster: the session's own when it runs on one, else started here."""
    from foundation.redis_client import cluster_mode

    if cluster_mode(settings.REDIS_URL, settings.TOKENWAY_REDIS_CLUSTER):
        yield settings.REDIS_URL
        return
    from devtools.redis_cluster import redis_cluster

    with redis_cluster(masters=3) as url:
        yield url


@pytest.fixture
def cluster_client(redis_cluster_url: str) -> Iterator[redis.Redis]:
    """A ``redis.RedisCluster`` of that cluster, every master emptied before and after."""
    from foundation.redis_client import client_for

    client = client_for(redis_cluster_url, cluster=True, timeout_s=None)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture
def tenant(db):
    from tests.factories import TenantFactory

    return TenantFactory(slug="acme", name="Acme")


@pytest.fixture
def other_tenant(db):
    from tests.factories import TenantFactory

    return TenantFactory(slug="globex", name="Globex")


def _member(tenant, role):
    from tests.factories import MembershipFactory

    return MembershipFactory(tenant=tenant, role=role)


@pytest.fixture
def owner(tenant):
    """Membership of the owner persona in ``tenant``."""
    return _member(tenant, "owner")


@pytest.fixture
def admin_member(tenant):
    return _member(tenant, "admin")


@pytest.fixture
def developer(tenant):
    return _member(tenant, "developer")


@pytest.fixture
def viewer(tenant):
    return _member(tenant, "viewer")


@pytest.fixture
def outsider(other_tenant):
    """Owner of another tenant: must never see or touch ``tenant``'s data."""
    return _member(other_tenant, "owner")


@pytest.fixture
def api_client_for():
    """``api_client_for(membership_or_user)`` -> DRF APIClient logged in with a session."""
    from rest_framework.test import APIClient

    def make(who):
        user = getattr(who, "user", who)
        client = APIClient()
        client.force_login(user)
        return client

    return make


@pytest.fixture
def catalog_fixture(db, redis_client):
    """The small fixture catalog loaded (not published)."""
    from tests.catalogs import apply_catalog_file

    return apply_catalog_file(FIXTURES / "small.yaml", sim_base_url=settings.SIM_BASE_URL)


@pytest.fixture(scope="session")
def shared_stack():
    """One real ``make run`` tree for the run, shared by the as-deployed suite and then the chaos suite
    (tests/deployed/conftest.py): it takes a minute or two to start on a 2-core machine."""
    from tests.deployed.conftest import shared_running_stack

    with shared_running_stack() as stack:
        yield stack


def _run_order(item: pytest.Item) -> tuple[bool, int]:
    """Browser tests run last: Playwright's sync API keeps an event loop running in the main thread for
    the whole browser session, which would break every later test that runs its own loop. Before them,
    the tests of the shared ``make run`` tree, so it starts late and stops soon: the as-deployed suite
    first, then the chaos suite, whose faults come after every as-deployed check."""
    browser = item.get_closest_marker("browser") is not None
    on_stack = "shared_stack" in getattr(item, "fixturenames", ())
    faults = item.get_closest_marker("reliability") is not None
    return browser, on_stack + faults


def _unfound_second_runs(items: list[pytest.Item]) -> list[str]:
    """Tests marked for a second run in a file ``make test-cluster``/``test-local`` would not collect."""
    from devtools.marked_files import SECOND_RUNS, marked_files

    root = Path(__file__).resolve().parents[1]
    return [
        f"{item.nodeid} ({marker})"
        for item in items
        for marker in SECOND_RUNS
        if item.get_closest_marker(marker) is not None and str(item.path.relative_to(root)) not in marked_files(marker)
    ]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if unfound := _unfound_second_runs(items):
        raise pytest.UsageError(
            "marked for a second run in a file devtools/marked_files.py does not find (apply the marker as "
            f"pytest.mark.<name> in that file): {', '.join(unfound[:5])}"
        )
    items.sort(key=_run_order)
