"""Broken provider answers become probe failures of the right class; the batch never crashes."""

from __future__ import annotations

import asyncio

import pytest
from django.test import override_settings

from evaluation.rules.from_rows import evaluate_rows
from evaluation.runner import Job, run_jobs
from tests.evaluation.upstream import misbehaving_upstream, offering

EXPECTED = {
    "healthy": "",
    "rate-limited": "rate_limited",
    "down": "server_error",
    "slow": "timeout",
    "not-json": "bad_response",
    "garbage-chunk": "bad_response",
    "truncated": "truncated",
    "bad-usage": "bad_usage",
}


@pytest.fixture(scope="module")
def outcomes():
    with override_settings(TOKENWAY_EVAL_PROBE_TIMEOUT_S=0.5), misbehaving_upstream() as base_url:
        offerings = {i: offering(i, model, base_url) for i, model in enumerate(EXPECTED, start=1)}
        results = asyncio.run(run_jobs([Job(i, "performance") for i in offerings], offerings, region="beijing"))
    return {offerings[job.offering_id].model: found for job, found in results}


def test_each_broken_answer_gets_its_error_class(outcomes):
    for model, error_class in EXPECTED.items():
        assert [o.error_class for o in outcomes[model]] == [error_class, error_class], model


def test_rate_limit_headers_and_status_are_recorded(outcomes):
    limited = outcomes["rate-limited"][0]
    assert limited.http_status == 429
    assert limited.details["rate_limit"] == {"x-ratelimit-remaining-requests": "0", "retry-after": "7"}
    assert outcomes["down"][0].http_status == 503


def test_failures_do_not_poison_latency_aggregates(outcomes):
    computed = evaluate_rows([o for found in outcomes.values() for o in found], None)
    healthy_ttft = [o.ttft_ms for o in outcomes["healthy"] if o.variant == "1k"]
    assert computed.metrics["ttft_p50"]["n"] == 1 and computed.metrics["ttft_p50"]["value"] == pytest.approx(
        healthy_ttft[0]
    )
    # up: healthy, 429, not-json, garbage, bad-usage; down: 503, timeout, truncated
    assert computed.metrics["availability"]["value"] == pytest.approx(5 / 8)
    assert computed.metrics["error_rate"]["value"] == pytest.approx(7 / 8)
