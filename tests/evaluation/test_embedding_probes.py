"""The embedding probe against the simulated fleet: the time to the whole answer (no TTFT, no speed), the
vectors' count and length, input tokens and the billed cost against our own count and the published price,
and failures counted against availability like any performance probe."""

from __future__ import annotations

import asyncio

import pytest
import requests

from contracts.usage import Tokens, cost_micros
from evaluation.probes.embedding import INPUT_TOKENS, INPUTS
from evaluation.rules.from_rows import evaluate_rows
from evaluation.runner import Job, run_jobs
from tests.catalogs import sim_catalog
from tests.evaluation.conftest import find

SMALL, LARGE = "text-embedding-3-small", "text-embedding-3-large"


def _run(sim, pairs, kind, repeat=1):
    catalog = sim_catalog(sim.base_url)
    by_id = {o.offering_id: o for o in catalog.offerings}
    ids = [find(catalog, provider, model).offering_id for provider, model in pairs]
    results = asyncio.run(run_jobs([Job(i, kind) for i in ids for _ in range(repeat)], by_id, region="beijing"))
    found: dict[int, list] = {i: [] for i in ids}
    for job, outcomes in results:
        found[job.offering_id].extend(outcomes)
    return catalog, [found[i] for i in ids]


def test_the_performance_probe_times_the_whole_answer_and_measures_the_vectors(sim):
    _, [small, large, routed] = _run(sim, [("openai", SMALL), ("openai", LARGE), ("openrouter", SMALL)], "performance")
    for [outcome], dimensions in ((small, 1536), (large, 3072), (routed, 1536)):
        assert outcome.ok, outcome.details
        assert (outcome.kind, outcome.variant) == ("performance", "embed")
        assert outcome.total_ms is not None and outcome.total_ms > 0
        assert outcome.ttft_ms is None and outcome.tps is None and outcome.answer_ttft_ms is None  # nothing streams
        assert outcome.details["inputs"] == INPUTS and outcome.details["dimensions"] == dimensions
        assert INPUTS * INPUT_TOKENS * 0.8 <= outcome.input_tokens <= INPUTS * INPUT_TOKENS
        assert outcome.output_tokens == 0
    figures = evaluate_rows(small, None).metrics
    assert figures["embedding_latency_p50"]["value"] == pytest.approx(small[0].total_ms, abs=1e-3)
    assert not {"ttft_p50", "tps", "answer_ttft_p50"} & set(figures)  # chat figures are absent, not zero


def test_the_price_probe_finds_the_honest_count_and_the_published_price(sim):
    catalog, [outcomes] = _run(sim, [("openai", LARGE)], "price", repeat=3)
    prices = find(catalog, "openai", LARGE).prices
    for outcome in outcomes:
        assert outcome.ok and outcome.variant == "embed", outcome.details
        details = outcome.details
        assert details["reported_input"] == details["counted_input"] == outcome.input_tokens
        expected = cost_micros(Tokens(input_uncached=outcome.input_tokens), prices)
        assert details["reported_cost"] == details["expected_cost"] == expected > 0  # billed exactly
        assert details["token_overcount"] is False and details["price_mismatch"] is False
    result = evaluate_rows(outcomes, prices)
    assert result.metrics["billed_ratio"]["value"] == 1.0 and result.metrics["overcount_factor"]["value"] == 1.0
    assert not {"token_overcount", "price_mismatch"} & set(result.flags)


def test_a_failing_embedding_offering_loses_availability(sim):
    rule = {"provider": "openrouter", "model": SMALL, "kind": "http_503", "count": 2}
    assert requests.post(f"{sim.base_url}/_sim/faults", json=rule, timeout=5).status_code == 201
    _, [outcomes] = _run(sim, [("openrouter", SMALL)], "performance", repeat=8)
    failed = [o for o in outcomes if not o.ok]
    assert [(o.error_class, o.http_status) for o in failed] == [("server_error", 503)] * 2
    assert all(o.total_ms is None for o in failed)
    metrics = evaluate_rows(outcomes, None).metrics
    assert metrics["availability"]["value"] == metrics["embedding_latency_p50"]["n"] / 8 == 6 / 8
    assert metrics["error_rate"]["value"] == 2 / 8
