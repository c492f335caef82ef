"""Embedding offerings on the board: scheduled for the embedding probe only (performance and price kinds),
measured by a real probe worker against the simulated fleet, and shown on the leaderboard API and on the
board's own view of embedding models (latency, availability, price per 1M input tokens, dimensions, n),
apart from the chat models' view."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from celery.worker import state as worker_state
from django.test import Client, override_settings
from django.utils import timezone

from contracts import redis_keys
from evaluation.models import ProbeResult
from evaluation.offerings_to_probe import catalog_from_db
from evaluation.services.aggregate import aggregates_refresh
from evaluation.services.dispatch import probes_dispatch
from evaluation.services.schedule import DUE_KEY
from evaluation.services.snapshot import build_snapshot, snapshot_publish
from evaluation.tasks import probe_batch_task
from tests.catalogs import apply_catalog_file
from tests.evaluation.conftest import find
from tests.waiting import wait_until
from tokenway.celery import app

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
MODEL = "text-embedding-3-small"  # at openai and openrouter; text-embedding-3-large at openai
PROBES = 20  # performance probes per embedding offering: availability's minimum n
PRICE_PROBES = 3  # the billed ratio's minimum n (of one offering)


@pytest.fixture
def db_catalog(sim, redis_client):
    """The demo catalog in the database (the board lists it) and published as the probes read it."""
    apply_catalog_file(ROOT / "demo" / "catalog.yaml", sim_base_url=sim.base_url)
    catalog = catalog_from_db()
    redis_client.set(redis_keys.CATALOG_SNAPSHOT, catalog.to_json())
    return catalog


def _embedding(catalog):
    return [o for o in catalog.offerings if "embeddings" in o.parameters]


def _kinds(members: set[str], offering_id: int) -> set[str]:
    return {m.split("|")[1] for m in members if m.endswith(f"|{offering_id}")}


@override_settings(TOKENWAY_REGIONS=["beijing", "shanghai"])
def test_embedding_offerings_are_scheduled_for_the_embedding_probe_only(db_catalog, redis_client):
    embedding = _embedding(db_catalog)
    assert {(o.provider, o.model) for o in embedding} == {
        ("openai", MODEL),
        ("openrouter", MODEL),
        ("openai", "text-embedding-3-large"),
    }
    probes_dispatch(now=1_000_000.0, rng=random.Random(1), spread_s=0)
    members = {m.decode() for m in redis_client.zrange(DUE_KEY, 0, -1)}
    for offering in embedding:
        assert _kinds(members, offering.offering_id) == {"performance", "price"}
        assert sum(m.endswith(f"|{offering.offering_id}") for m in members) == 4  # two kinds x two regions
    chat = find(db_catalog, "openai", "gpt-4.1-mini")
    assert _kinds(members, chat.offering_id) == {"performance", "cache", "price", "capability", "quality"}


def _worker_idle() -> bool:
    return not worker_state.reserved_requests and not worker_state.active_requests


def _probe_with_a_worker(embedding, priced) -> dict[str, object]:
    jobs = [[o.offering_id, "performance"] for o in embedding for _ in range(PROBES)]
    jobs += [[priced.offering_id, "price"] for _ in range(PRICE_PROBES)]
    batch = probe_batch_task.apply_async(args=("beijing", jobs), queue="probes.beijing")
    with start_worker(
        app, pool="threads", concurrency=1, queues=["probes.beijing"], perform_ping_check=False, shutdown_timeout=30
    ):
        result = batch.get(timeout=120)
        wait_until(_worker_idle, timeout=30, message="the worker still holds a probe batch")
    assert result == {"refused": False, "region": "beijing", "jobs": len(jobs), "rows": len(jobs)}
    return result


def _row(html: str, offering_id: int) -> str:
    row = html[html.index(f'data-offering="{offering_id}"') :]
    return row[: row.index("</tr>")]


@override_settings(TOKENWAY_REGION="beijing", TOKENWAY_REGIONS=["beijing"])
def test_a_probe_worker_measures_embedding_offerings_and_the_board_shows_them(db_catalog, redis_client):
    embedding = _embedding(db_catalog)
    small, large = find(db_catalog, "openai", MODEL), find(db_catalog, "openai", "text-embedding-3-large")
    _probe_with_a_worker(embedding, small)
    rows = ProbeResult.objects.filter(offering_id__in=[o.offering_id for o in embedding])
    assert {(r.kind, r.variant, r.error_class) for r in rows} == {("performance", "embed", ""), ("price", "embed", "")}
    assert all(r.total_ms and r.ttft_ms is None and r.tps is None for r in rows)

    aggregates_refresh(window="1h", prices={}, now=timezone.now() + dt.timedelta(minutes=1))
    snapshot_publish(client=redis_client, snapshot=build_snapshot())
    api = Client().get("/api/v1/leaderboard", {"model": MODEL, "window": "1h"})
    assert api.status_code == 200
    results = api.json()["results"]
    assert {r["provider"] for r in results} == {"openai", "openrouter"}
    for figures in results:
        assert figures["n"] == figures["availability_n"] == PROBES and not figures["flags"]
        assert figures["availability"] == 1.0 and figures["error_rate"] == 0.0
        assert figures["embedding_latency_p50_status"] == "ok" and figures["embedding_latency_p50"] > 0
        assert figures["embedding_latency_p90_status"] == "needs_more_data"  # shown from n = 30
        assert figures["ttft_p50"] is None and figures["ttft_p50_status"] == "no_data"  # no TTFT for embeddings
    priced = next(r for r in results if r["offering_id"] == small.offering_id)
    # honest: billed at the published price, input tokens as we count them (medians from the rollup histograms)
    assert priced["billed_ratio"] == pytest.approx(1.0, rel=0.01) and priced["billed_ratio_n"] == PRICE_PROBES
    assert priced["overcount_factor"] == pytest.approx(1.0, rel=0.01)

    board = Client().get("/", {"kind": "embeddings", "window": "1h"})
    html = board.content.decode()
    assert board.status_code == 200 and 'data-kind="embeddings"' in html
    assert 'aria-current="page">Embedding models</a>' in html  # the view's tab
    assert html.count('<tr data-model="') == len(embedding)
    row = _row(html, small.offering_id)
    assert "1,536" in row and "$0.0200" in row and "100.00%" in row and " ms</span>" in row
    assert row.rstrip().endswith(f">{PROBES}</td>") and "needs more data" in row  # n; latency p90 is thin
    assert "3,072" in _row(html, large.offering_id)
    chat = Client().get("/", {"window": "1h"}).content.decode()
    assert 'data-kind="chat"' in chat and 'data-model="text-embedding' not in chat

    model_page = Client().get(f"/models/{MODEL}/", {"window": "1h"}).content.decode()
    assert 'data-kind="embeddings"' in model_page and model_page.count('<tr data-model="') == 2
    offering_page = Client().get(f"/offerings/{large.offering_id}/", {"window": "1h"}).content.decode()
    assert 'id="offering-measured"' in offering_page and "3,072" in offering_page
    fragment = Client().get("/leaderboard/rows/", {"kind": "embeddings", "window": "1h"}).content.decode()
    assert fragment.count('<tr data-model="') == len(embedding)
    trend = Client().get("/leaderboard/trend.json", {"kind": "embeddings", "metric": "latency", "trend_window": "1h"})
    assert trend.status_code == 200 and trend.json()["metric"] == "latency"
    assert {s["offering_id"] for s in trend.json()["series"]} <= {o.offering_id for o in embedding}
