"""A fuzzer pass over the three caller dialects, from their declared schemas (routing/wire/schemas/):
bodies the schema accepts and mutations of them go to the real gateway over HTTP (simulated providers
of both wire formats behind it). None may get a 5xx, and every refusal is JSON in the caller's shape.
Bounded in examples, one request each (640 requests, ~30 s)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routing.wire.schema import validate
from routing.wire.schemas import BY_PATH
from tests.routing.schema_strategies import mutation_of, valid

# Catalog models of each upstream dialect and a mixed one: valid bodies reach the translations too.
MODELS = ("gpt-4.1-mini", "claude-haiku-4.5", "deepseek-v3.2")
VALID_EXAMPLES = 40  # per endpoint: one request each (most are answered by a simulated provider)
MUTATED_EXAMPLES = 120  # per endpoint: one request each (most are refused at once)
FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


BODIES = {
    path: st.builds(lambda body, model: {**body, "model": model}, valid(spec), st.sampled_from(MODELS))
    for path, spec in BY_PATH.items()
}
MUTATED = {path: mutation_of(bodies) for path, bodies in BODIES.items()}


def _caller_shape(path: str, response: requests.Response) -> None:
    """A refusal is JSON in the caller's error shape: Anthropic's for /v1/messages*, OpenAI's otherwise."""
    assert response.headers["content-type"].startswith("application/json"), response.text[:300]
    payload = response.json()
    if path.startswith("/v1/messages"):
        assert payload["type"] == "error" and isinstance(payload["error"]["message"], str), payload
    else:
        assert set(payload["error"]) >= {"message", "type", "param", "code"}, payload


@pytest.fixture(scope="module")
def tally() -> Iterator[Counter[str]]:
    counts: Counter[str] = Counter()
    yield counts
    print(f"\n[fuzz] statuses by kind of body: {dict(sorted(counts.items()))}")


def _post(gateway, tenant, path: str, body: dict[str, Any]) -> requests.Response:
    headers = {"x-api-key": tenant.key, "content-type": "application/json"}
    return requests.post(f"{gateway.base_url}{path}", data=orjson.dumps(body), headers=headers, timeout=30)


def _never_a_5xx(path: str, body: dict[str, Any], response: requests.Response) -> None:
    assert response.status_code < 500, (path, body, response.status_code, response.text[:300])
    if response.status_code >= 400:
        _caller_shape(path, response)


@pytest.mark.parametrize("path", sorted(BY_PATH))
@settings(FUZZ, max_examples=VALID_EXAMPLES)
@given(data=st.data())
def test_declared_bodies_pass_the_gateway_and_never_get_a_5xx(gateway, tenant, tally, path, data):
    body = data.draw(BODIES[path])
    response = _post(gateway, tenant, path, body)
    tally[f"valid {response.status_code}"] += 1
    _never_a_5xx(path, body, response)
    assert not _schema_refusal(response), (path, body, response.text[:300])  # what it declares, it accepts


@pytest.mark.parametrize("path", sorted(BY_PATH))
@settings(FUZZ, max_examples=MUTATED_EXAMPLES)
@given(data=st.data())
def test_mutated_bodies_never_get_a_5xx_or_a_non_json_refusal(gateway, tenant, tally, path, data):
    body = data.draw(MUTATED[path])
    response = _post(gateway, tenant, path, body)
    tally[f"mutated {response.status_code}"] += 1
    _never_a_5xx(path, body, response)


def _schema_refusal(response: requests.Response) -> bool:
    if response.status_code != 400:
        return False
    message = response.json()["error"]["message"]
    return (message.startswith("'") and "' must be" in message) or "' is required" in message


@pytest.mark.parametrize("path", sorted(BY_PATH))
@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_every_body_drawn_from_a_schema_passes_that_schema(path, data):
    """In process, many more bodies: the strategies (and so the HTTP pass above) follow the declaration."""
    validate(data.draw(valid(BY_PATH[path])), BY_PATH[path])
