"""What evaluation tells routing about honesty: integrity probes due at once, truth factors in the snapshot."""

from __future__ import annotations

import random

import pytest

from evaluation.models import ALL_REGIONS, Aggregate, Incident
from evaluation.probes.outcome import Outcome
from evaluation.rules.from_rows import evaluate_rows
from evaluation.services.schedule import DUE_KEY, member, schedule_sync
from evaluation.services.snapshot import build_snapshot


def _price_row(reported_in: int, reported_cost: int | None) -> Outcome:
    details = {
        "counted_input": 800, "reported_input": reported_in, "expected_cost": 1000, "reported_cost": reported_cost,
        "token_overcount": reported_in > 888, "price_mismatch": reported_cost not in (None, 1000),
    }  # fmt: skip
    return Outcome("price", "reported_vs_counted", 0.0, input_tokens=reported_in, cached_tokens=0, details=details)


def test_price_truth_factors_are_means_with_intervals():
    dishonest = evaluate_rows([_price_row(920, 1300) for _ in range(5)], None)
    for metric, truth in (("overcount_factor", 1.15), ("billed_ratio", 1.3)):
        figure = dishonest.metrics[metric]
        assert figure["value"] == pytest.approx(truth) and figure["lo"] < truth < figure["hi"] < truth + 0.01
    assert {"token_overcount", "price_mismatch"} <= set(dishonest.flags)
    silent = evaluate_rows([_price_row(800, None)], None)  # a provider that reports no cost
    assert silent.metrics["overcount_factor"]["value"] == 1.0 and "billed_ratio" not in silent.metrics


def test_new_offerings_get_integrity_probes_at_once_and_the_rest_spread(redis_client):
    now = 1_000_000.0
    wanted = {member("beijing", kind, 7): 3600 for kind in ("price", "quality", "cache", "capability")}
    wanted[member("beijing", "performance", 7)] = 300
    schedule_sync(client=redis_client, wanted=wanted, now=now, rng=random.Random(3))
    due = {m.decode(): score for m, score in redis_client.zrange(DUE_KEY, 0, -1, withscores=True)}
    assert due[member("beijing", "price", 7)] == now and due[member("beijing", "quality", 7)] == now
    assert all(due[member("beijing", k, 7)] > now for k in ("cache", "capability", "performance"))


@pytest.mark.django_db
def test_snapshot_carries_intervals_truth_factors_and_open_incidents():
    from django.utils import timezone

    computed = evaluate_rows([_price_row(920, 1300) for _ in range(4)], None)
    Aggregate.objects.create(
        offering_id=9,
        region=ALL_REGIONS,
        window="1h",
        computed_at=timezone.now(),
        n=4,
        metrics={**computed.metrics, "availability": {"value": 0.9, "lo": 0.6, "hi": 0.98, "n": 10}},
        flags=computed.flags,
    )
    Incident.objects.create(
        offering_id=9,
        region=ALL_REGIONS,
        metric="ttft",
        direction="worse",
        opened_at=timezone.now(),
        baseline=500.0,
        observed=2500.0,
    )
    stats = build_snapshot().stats[ALL_REGIONS]["9"]
    # the intervals' pessimistic ends: four identical probes leave 1.15 and 1.3 within less than 1%
    assert stats.price_n == 4 and stats.overcount_factor == pytest.approx(computed.metrics["overcount_factor"]["hi"])
    assert 1.15 < stats.overcount_factor < 1.16 and 1.3 < stats.billed_ratio < 1.31 and stats.availability_lo == 0.6
    assert stats.incidents == ("ttft",) and "price_mismatch" in stats.flags


def test_beat_start_dispatches_at_once_and_refreshes_soon_after(monkeypatch):
    from evaluation import startup, tasks

    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(tasks.probes_dispatch_task, "apply_async", lambda **kw: sent.append(("dispatch", kw)))
    monkeypatch.setattr(tasks.stats_refresh_task, "apply_async", lambda **kw: sent.append(("refresh", kw)))
    startup._probe_integrity_at_start()
    assert sent[0] == ("dispatch", {"queue": "default"})
    assert [kw["countdown"] for name, kw in sent if name == "refresh"] == list(startup.STARTUP_REFRESH_S)
    assert max(startup.STARTUP_REFRESH_S) < 60  # flags reach the gateway within about a minute
