"""Embedding offerings in the catalog: not probed (every probe is a chat call), and the leaderboard's API
and pages still answer with them in the catalog, with or without figures for them."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from evaluation.offerings_to_probe import probed_offerings
from evaluation.services.aggregate import aggregates_refresh
from evaluation.services.snapshot import build_snapshot, snapshot_publish
from tests.evaluation.conftest import find
from tests.evaluation.seed import perf_rows, write_rows

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]
MODEL = "text-embedding-3-small"


def test_embedding_offerings_are_in_the_catalog_but_not_probed(catalog):
    embedding = [o for o in catalog.offerings if "embeddings" in o.parameters]
    assert {o.provider for o in embedding if o.model == MODEL} == {"openai", "openrouter"}
    probed = probed_offerings(catalog)
    assert probed and not any(o.offering_id in probed for o in embedding)


def test_the_leaderboard_answers_with_embedding_offerings_in_the_catalog(catalog, redis_client):
    chat, embedding = find(catalog, "openai", "gpt-4.1-mini"), find(catalog, "openai", MODEL)
    now = timezone.now()
    rows = []
    for seed, offering in enumerate((chat, embedding)):  # figures for an embedding offering must not break it
        rows += perf_rows(
            offering_id=offering.offering_id,
            region="beijing",
            start=now - dt.timedelta(minutes=40),
            count=40,
            step=dt.timedelta(minutes=1),
            ttft_median=300 + 100 * seed,
            tps=50,
            seed=seed,
        )
    write_rows(rows)
    aggregates_refresh(window="1h", prices={}, now=now)
    snapshot_publish(client=redis_client, snapshot=build_snapshot())
    client = Client()

    everything = client.get("/api/v1/leaderboard")
    assert everything.status_code == 200
    assert {r["offering_id"] for r in everything.json()["results"]} == {chat.offering_id, embedding.offering_id}
    only = client.get("/api/v1/leaderboard", {"model": MODEL})
    assert only.status_code == 200 and [r["offering_id"] for r in only.json()["results"]] == [embedding.offering_id]
    assert client.get("/api/v1/leaderboard", {"model": "text-embedding-3-large"}).json()["results"] == []
    assert client.get("/").status_code == 200
