"""Property-based run over every operation of /api/schema/: no input yields a server error, every error is
``{"error": {"code", "message", "param"}}``, and responses conform to the schema (status, content type, body).

Each operation is called the way its clients call it: session-token auth for management operations, a real
API key for key-authenticated ones, nothing for public ones. Path ids are the ids of real objects so that
generated bodies reach real work, not only 404s.
"""

from __future__ import annotations

import itertools
import os
import time
from typing import Any

import orjson
import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.failures import FailureGroup

from contracts import redis_keys
from credentials.services import credential_create
from tenants.invitations import invitation_create
from tenants.models import Tenant
from tests.factories import MembershipFactory, ModelFactory, OfferingFactory, ProviderFactory, issue_key

# Per operation and mode: ~40 operations x 2 modes. Sized per pass: the whole suite's run (embedded servers)
# sweeps 20; the run on the machine's own servers (make test-local) only asks every operation again on them.
MAX_EXAMPLES = int(os.environ.get("TOKENWAY_TEST_SCHEMATHESIS_EXAMPLES", "20"))
# A bound against a hang, not a speed target (benchmarks measure speed): ~50 s alone, ~75 s under coverage
# on a busy 2-core machine.
BUDGET_S = 240
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
KNOWN_REQUEST_ID = "req_schemathesis"
# Positive: valid inputs must reach real work and answer in schema. Negative: inputs that break the schema
# (wrong types, missing fields, out-of-range values) must be a documented 4xx, never a 5xx.
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)


@pytest.fixture
def keep_db_connection():
    """The raw WSGI app closes DB connections per request; the test transaction must survive (as in Django's Client)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def world(owner, redis_client, settings) -> dict[str, Any]:
    """Real objects for every path parameter, and one credential per kind of authentication."""
    settings.STRIPE_WEBHOOK_SECRET = "whsec_schemathesis"
    tenant = owner.tenant
    provider = ProviderFactory.create(slug="deepseek")
    OfferingFactory(provider=provider, model=ModelFactory(slug="deepseek-v3.2"))
    _, plaintext = issue_key(tenant, created_by=owner.user, name="caller")
    target_key, _ = issue_key(tenant, created_by=owner.user, name="target")
    redis_client.set(
        redis_keys.generation(KNOWN_REQUEST_ID),
        orjson.dumps({"request_id": KNOWN_REQUEST_ID, "tenant_id": tenant.pk, "tokens": {"output": 3}}),
    )
    return {
        "tenant_pk": tenant.pk,
        "ids": {
            "member_id": MembershipFactory.create(tenant=tenant, role="developer").pk,
            "invitation_id": invitation_create(actor=owner, email="new@example.test", role="viewer").invitation.pk,
            "key_id": target_key.pk,
            "credential_id": credential_create(tenant=tenant, provider=provider, secret="sk-schemathesis-1234").pk,
        },
        "auth": {
            "apiKeyAuth": {"Authorization": f"Bearer {plaintext}"},
            "tokenAuth": {"Authorization": f"Token {Token.objects.create(user=owner.user).key}"},
        },
    }


def _headers_for(operation: Any, auth: dict[str, dict[str, str]]) -> dict[str, str]:
    schemes = {name for requirement in operation.definition.raw.get("security", []) for name in requirement}
    for scheme in ("apiKeyAuth", "tokenAuth"):
        if scheme in schemes:
            return auth[scheme]
    return {}  # public operation


def _point_at_real_objects(case: Any, world: dict[str, Any], turn: int) -> None:
    if case.path_parameters:
        for name in case.path_parameters:
            if name == "tenant_slug":  # re-read: a generated PATCH may have renamed it
                case.path_parameters[name] = Tenant.objects.get(pk=world["tenant_pk"]).slug
            elif name in world["ids"]:
                case.path_parameters[name] = world["ids"][name]
    if case.operation.path == "/api/v1/generation" and turn % 2:
        case.query = {"id": KNOWN_REQUEST_ID}


@pytest.mark.local_servers
@pytest.mark.django_db
@pytest.mark.usefixtures("keep_db_connection")
@pytest.mark.timeout(BUDGET_S + 60)
def test_every_operation_answers_in_schema_and_never_with_a_server_error(world):
    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    operations = [result.ok() for result in schema.get_all_operations()]
    paths = {operation.path for operation in operations}
    assert len(operations) >= 31
    assert {"/api/v1/generation", "/api/v1/key", "/api/v1/stripe/webhook", "/api/v1/leaderboard/series"} <= paths
    for operation in operations:  # key-authenticated operations declare it, so they are called with a real key
        if operation.path in ("/api/v1/generation", "/api/v1/key"):
            assert _headers_for(operation, world["auth"]) == world["auth"]["apiKeyAuth"], operation.label
    failures: list[str] = []
    statuses: dict[int, int] = {}
    turns = itertools.count()
    started = time.monotonic()
    for operation, mode in itertools.product(operations, MODES):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def run(case):
            _point_at_real_objects(case, world, next(turns))
            # identity: the in-process transport hands back the body as sent, and pages are gzipped on request
            headers = {**_headers_for(case.operation, world["auth"]), "Accept-Encoding": "identity"}
            response = case.call(headers=headers)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            label = f"{case.method} {case.formatted_path} {case.query or ''} -> {response.status_code}"
            if "Traceback" in response.text:
                failures.append(f"{label}: stack leaked")
            try:
                case.validate_response(response, checks=CHECKS, headers=headers)
            except FailureGroup as group:
                failures.append(f"{label}: {[f.title for f in group.exceptions]} {response.text[:200]}")

        try:
            run()
        except Unsatisfiable:  # nothing to break: the operation has no parameters and no body
            assert mode is GenerationMode.NEGATIVE, operation.label
    elapsed = time.monotonic() - started
    assert not failures, "\n".join(failures)
    assert elapsed < BUDGET_S
    print(f"{len(operations)} operations, {sum(statuses.values())} examples in {elapsed:.1f}s: {statuses}")
    assert {200, 201, 204, 400, 404} <= set(statuses)  # the run reached real work, not only refusals
