"""Property-based run over /api/schema/ for the platform's operations: no input yields a server error."""

from __future__ import annotations

import time

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token

from tests.factories import ModelFactory, ProviderFactory

# Operations owned by the platform apps (other teams run their own schema tests).
PLATFORM_PREFIXES = ("/api/v1/tenants", "/api/v1/invitations", "/api/v1/catalog")
MAX_EXAMPLES = 12  # per operation: keeps the whole run well under a minute
BUDGET_S = 60


@pytest.fixture
def keep_db_connection():
    """The raw WSGI app closes DB connections per request; the test transaction must survive (as in Django's Client)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@pytest.mark.usefixtures("keep_db_connection")
def test_no_server_errors_on_platform_operations(owner, redis_client):
    ProviderFactory(slug="deepseek")
    ModelFactory(slug="deepseek-v3.2")
    token = Token.objects.create(user=owner.user).key
    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    operations = [
        result.ok() for result in schema.get_all_operations() if result.ok().path.startswith(PLATFORM_PREFIXES)
    ]
    assert len(operations) >= 15
    failures: list[str] = []
    statuses: set[int] = set()
    started = time.monotonic()
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def run(case):
            if case.path_parameters and "tenant_slug" in case.path_parameters:
                case.path_parameters["tenant_slug"] = owner.tenant.slug
            response = case.call(headers={"Authorization": f"Token {token}"})
            statuses.add(response.status_code)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]}")
            elif response.status_code >= 400 and response.headers.get("content-type", [""])[0].startswith(
                "application/json"
            ):
                assert "error" in response.json(), (case.method, case.formatted_path, response.text[:300])

        run()
        assert time.monotonic() - started < BUDGET_S
    assert failures == []
    assert {200, 201, 400, 404} <= statuses  # the run reached real work, not only refusals
