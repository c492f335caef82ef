"""Reasoning models measured right: first token (reasoning included), first answer token, and output
speed over the time the tokens were produced, against a fleet whose timing is exact.

The fleet's profile has no randomness in its timing (TTFT sigma 0, speed jitter 0, no prefill), so
every request's truth is the configured TTFT and tokens/s: the first token (reasoning, streamed or
hidden) leaves at TTFT, every later token at TOKENS_PER_S. Before this measurement, the reasoning
models' speed came out 1.6-1.8x the truth (reasoning tokens divided by the answer's streaming time)
and their TTFT was the first answer token's.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.utils import timezone

from evaluation.probes.outcome import Outcome
from evaluation.runner import Job, run_jobs
from evaluation.services.aggregate import aggregates_refresh
from evaluation.services.results import probe_results_save
from evaluation.services.snapshot import build_snapshot
from sim.server import SimHandle, start_in_thread
from tests.catalogs import sim_catalog

SCALE = 0.5  # real seconds per sim second: a 500 ms real TTFT, streams of about a second
TTFT_MS, TOKENS_PER_S = 1000.0, 100.0
# Every offering is probed at once in one process beside the fleet, so a loaded machine delays all of them
# alike: each reasoning model is judged against the plain model measured in the same run (the control),
# within CONTROL_TOLERANCE; before the fix the reasoning models read 1.6-2.1x. eval_bench holds the absolute
# 5% bar against the fleet's configured truth on a quiet machine (docs/evaluation.md).
CONTROL_TOLERANCE = 0.25  # a busy 2-core machine spreads probes run at once; a 1.6x error still fails
PROBES = 10  # performance probes per offering (each: a 1k and a 10k request)
REGION = "lab"  # a region the fleet's network matrix does not know: no network distance on top of the truth
PROFILE = f"""
version: 1
defaults:
  perf: {{ttft_ms: {TTFT_MS}, ttft_sigma: 0, tokens_per_s: {TOKENS_PER_S}, jitter: 0, capacity: 64, prefill_ms_per_1k: 0}}
  output_tokens: {{min: 60, max: 120}}
  reasoning: true
providers:
  openai:
    reasoning_field: null
    offerings:
      gpt-4.1-mini: {{reasoning: false}}
  gemini: {{reasoning_field: null}}
"""
HIDDEN = (("openai", "gpt-5"), ("gemini", "gemini-2.5-flash"))
STREAMED = (("deepseek", "deepseek-r1"), ("minimax", "minimax-m2"))
PLAIN = (("openai", "gpt-4.1-mini"),)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimHandle]:
    path = Path(tmp_path_factory.mktemp("profiles")) / "exact.yaml"
    path.write_text(PROFILE)
    with start_in_thread(seed=9, time_scale=SCALE, profiles=path) as handle:
        yield handle


@pytest.fixture(scope="module")
def measured(fleet: SimHandle) -> dict[tuple[str, str], tuple[int, list[Outcome]]]:
    """(provider, model) -> (offering id, its performance outcomes), all offerings probed at once."""
    catalog = sim_catalog(fleet.base_url)
    by_id = {o.offering_id: o for o in catalog.offerings}
    ids = {(o.provider, o.model): o.offering_id for o in catalog.offerings}
    keys = HIDDEN + STREAMED + PLAIN
    jobs = [Job(ids[key], "performance") for key in keys for _ in range(PROBES)]
    results = asyncio.run(run_jobs(jobs, by_id, region=REGION))
    out: dict[tuple[str, str], tuple[int, list[Outcome]]] = {key: (ids[key], []) for key in keys}
    key_of = {ids[key]: key for key in keys}
    for job, outcomes in results:
        out[key_of[job.offering_id]][1].extend(outcomes)
    return out


def _median(outcomes: list[Outcome], field: str) -> float:
    values = [getattr(o, field) for o in outcomes]
    assert all(v is not None for v in values), [o.details for o in outcomes]
    return statistics.median(values) / SCALE if field.endswith("_ms") else statistics.median(values) * SCALE


@pytest.mark.parametrize("key", HIDDEN + STREAMED, ids=lambda key: "/".join(key))
def test_reasoning_models_speed_and_ttft_match_a_plain_model_on_the_same_timing(measured, key):
    _, outcomes = measured[key]
    _, control = measured[PLAIN[0]]
    assert len(outcomes) == 2 * PROBES and all(o.ok for o in outcomes), [o.details for o in outcomes]
    # Hidden reasoning's first token is worked back from the answer's speed: a loaded machine bunches reads and
    # skews it, so only the streamed models' first token is judged here (eval_bench judges all on a quiet one).
    # The fault this guards against reads reasoning models 1.55-1.79x too fast (reasoning tokens over the answer's
    # time) and their first token ~2x late: those bounds are held to the tolerance. In the other direction a
    # loaded machine (CI runs lanes beside each other) delivers the longer reasoning streams slower than the
    # short control's, so a slower reading is allowed down to half; eval_bench judges 5% on a quiet machine.
    for field in ("tps", "ttft_ms") if key in STREAMED else ("tps",):
        got, want = _median(outcomes, field), _median(control, field)
        if field == "tps":
            assert want * 0.5 <= got <= want * (1 + CONTROL_TOLERANCE), (field, got, want)
        else:
            assert got == pytest.approx(want, rel=CONTROL_TOLERANCE), (field, got, want)


@pytest.mark.parametrize("key", HIDDEN + STREAMED, ids=lambda key: "/".join(key))
def test_first_answer_token_comes_after_the_reasoning_and_is_labelled(measured, key):
    _, outcomes = measured[key]
    mode = "hidden" if key in HIDDEN else "streamed"
    for o in outcomes:
        assert o.details["reasoning"] == mode and o.details["reasoning_tokens"] >= 30
        assert o.answer_ttft_ms is not None and o.ttft_ms is not None and o.answer_ttft_ms >= o.ttft_ms
    if mode == "streamed":  # seen arriving: typically the 30+ reasoning tokens' time (300 ms sim) between them
        gaps = [o.answer_ttft_ms - o.ttft_ms for o in outcomes if o.answer_ttft_ms and o.ttft_ms]
        assert statistics.median(gaps) >= 0.5 * 30 / TOKENS_PER_S * 1000 * SCALE, gaps  # late reads bunch some


def test_a_model_that_does_not_reason_has_one_first_token(measured):
    _, outcomes = measured[PLAIN[0]]
    assert all(o.ok and o.answer_ttft_ms == o.ttft_ms and "reasoning" not in o.details for o in outcomes)
    assert _median(outcomes, "ttft_ms") >= TTFT_MS * 0.95  # never early (a loaded machine makes it late)


@pytest.mark.django_db
@pytest.mark.local_servers
def test_both_first_tokens_reach_the_leaderboard_api_and_the_routing_snapshot(measured, catalog, client):
    results = [(Job(oid, "performance"), outcomes) for oid, outcomes in measured.values()]
    probe_results_save(region=REGION, results=results)
    now = timezone.now() + dt.timedelta(minutes=1)
    aggregates_refresh(window="1h", prices={}, now=now)
    body = client.get("/api/v1/leaderboard", {"window": "1h", "region": "all"}).json()
    rows = {row["offering_id"]: row for row in body["results"]}
    r1_id, _ = measured[STREAMED[0]]
    r1 = rows[r1_id]
    assert r1["answer_ttft_p50_status"] == "ok" and r1["answer_ttft_p50_n"] == PROBES
    assert r1["answer_ttft_p50"] > r1["ttft_p50"] * 1.2 and r1["answer_ttft_p50_ci"][0] <= r1["answer_ttft_p50"]
    assert body["min_n"]["answer_ttft_p50"] == 10
    assert "reasoning included" in body["definitions"]["ttft_p50"] and set(body["definitions"]) >= set(body["min_n"])
    plain_id, _ = measured[PLAIN[0]]
    assert rows[plain_id]["answer_ttft_p50"] == rows[plain_id]["ttft_p50"]
    stats = build_snapshot("1h").stats["all"][str(r1_id)]
    assert stats.answer_ttft_p50_ms == pytest.approx(r1["answer_ttft_p50"])
    assert stats.ttft_p50_ms == pytest.approx(r1["ttft_p50"])
    assert stats.tps_p50 == pytest.approx(r1["tps"])
