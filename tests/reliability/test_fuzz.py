"""Fuzzing the gateway's own endpoints on the running stack: no input gets a 5xx.

Schemathesis generates valid and invalid requests from docs/gateway-openapi.yaml (every
operation: its coverage phase's boundary and negative values, then a fuzzing run); hypothesis
sends >= 5,000 valid requests with fields replaced by arbitrary JSON or removed
(tests/reliability/mutations.py), and arbitrary JSON documents, to every POST endpoint.
Everything bounded in cases and time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.deployed.conftest import Stack
from tests.reliability.mutations import BASES, MUTATIONS, mutated

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.reliability, pytest.mark.timeout(420)]

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "gateway-openapi.yaml"
# Schemathesis spends ~80 ms of CPU per generated case: its share is bounded by examples, the bulk of
# the cases comes from the mutation strategy (tests/reliability/mutations.py), ~5 ms a case.
EXAMPLES_PER_OPERATION = 200
MIN_SCHEMATHESIS_CASES = 600  # the coverage phase's boundary and negative cases, then the fuzzing phase
MUTATED_EXAMPLES = 1_300  # x 4 endpoints: >= 5,000 requests
RUN_TIMEOUT_S = 180  # each of the two runs
POST_PATHS = ("/v1/chat/completions", "/v1/messages", "/v1/messages/count_tokens", "/v1/responses")

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=30,
)
FIELDS = st.sampled_from(["model", "messages", "max_tokens", "stream", "stream_options", "input", "system",
                          "max_output_tokens", "temperature", "tools", "provider", "metadata"])  # fmt: skip
BODIES = st.dictionaries(FIELDS, JSON, max_size=6) | JSON


def _cases_and_server_errors(ndjson: Path) -> tuple[int, list[str]]:
    """Every request schemathesis sent (all phases) and those answered 5xx, from its event log."""
    cases, errors = 0, []
    for line in ndjson.read_text().splitlines():
        finished = json.loads(line).get("ScenarioFinished")
        for interaction in (finished or {}).get("recorder", {}).get("interactions", {}).values():
            cases += 1
            status = (interaction.get("response") or {}).get("status_code") or 0
            if status >= 500:
                request = interaction.get("request", {})
                errors.append(f"{status} {request.get('method')} {request.get('uri')} {request.get('body')}"[:400])
    return cases, errors


def _schemathesis(stack: Stack, report: Path, *, phases: str, workers: int) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", str(SCHEMA), "--url", stack.base_url,
        "--header", f"Authorization: Bearer {stack.key}", "--checks", "not_a_server_error", "--phases", phases,
        "--max-examples", str(EXAMPLES_PER_OPERATION), "--workers", str(workers), "--seed", "20261130",
        "--request-timeout", "30", "--report", "ndjson", "--report-ndjson-path", str(report),
        "--suppress-health-check", "all",
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, cwd=ROOT)


def test_schemathesis_finds_no_server_error(chaos: Stack, tmp_path: Path) -> None:
    # The coverage phase (boundary and negative values of every field) in one worker: its generator
    # is not thread-safe in schemathesis 4.32; the fuzzing phase runs the five operations in parallel.
    runs = [
        (
            _schemathesis(chaos, tmp_path / f"{phases}.ndjson", phases=phases, workers=workers),
            tmp_path / f"{phases}.ndjson",
        )
        for phases, workers in (("coverage", 1), ("examples,fuzzing", 5))
    ]
    cases, errors = 0, list[str]()
    for run, report in runs:
        found, failed = _cases_and_server_errors(report)
        cases, errors = cases + found, errors + failed
        print(f"\n[reliability] schemathesis: {run.stdout[-600:]}")
    print(f"\n[reliability] schemathesis: {cases} cases, {len(errors)} answered 5xx")
    assert errors == [], errors[:5]
    for run, _ in runs:
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert cases >= MIN_SCHEMATHESIS_CASES


@settings(
    max_examples=MUTATED_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
@given(mutations=MUTATIONS)
def test_5000_mutated_requests_never_get_a_5xx(chaos: Stack, tally: Counter[str], mutations: list[Any]) -> None:
    for path in BASES:
        body = mutated(path, mutations)
        response = requests.post(
            chaos.base_url + path,
            data=json.dumps(body),
            timeout=30,
            headers={"authorization": f"Bearer {chaos.key}", "content-type": "application/json"},
        )
        tally[str(response.status_code)] += 1
        assert response.status_code < 500, (path, json.dumps(body)[:300], response.status_code, response.text[:300])


@pytest.fixture(scope="module")
def tally() -> Iterator[Counter[str]]:
    counts: Counter[str] = Counter()
    yield counts
    print(f"\n[reliability] mutated requests: {sum(counts.values())} sent, by status {dict(sorted(counts.items()))}")
    assert sum(counts.values()) >= 5_000


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
@given(body=BODIES)
def test_arbitrary_json_bodies_never_get_a_5xx(chaos: Stack, body: object) -> None:
    raw = json.dumps(body).encode()
    for path in POST_PATHS:
        response = requests.post(
            chaos.base_url + path,
            data=raw,
            timeout=30,
            headers={"authorization": f"Bearer {chaos.key}", "content-type": "application/json"},
        )
        assert response.status_code < 500, (path, raw[:300], response.status_code, response.text[:300])
