"""Leaderboard pages through the Django client: each figure with its own n and interval, "needs more data"
below evaluation's minimum n, unknown filters named on the page, sort in the URL, definitions linked from
every header, per-region table, offering page, trend JSON (400 on unknown values)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.frontend.site import populate

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(personas, catalog, redis_client):
    populate(personas, catalog)
    return catalog


def _rows(html: str) -> list[str]:
    return [chunk.split('"', 1)[0] for chunk in html.split('data-provider="')[1:]]


def test_figures_carry_their_interval_and_n_and_thin_ones_say_so(site):
    html = Client().get("/").content.decode()
    assert 'title="95% interval 378–462 · n = 120"' in html  # deepseek TTFT p50 420 ms, interval ±10%
    assert "378–462 · n 120" in html
    anthropic = html[html.index('data-provider="anthropic"') :]
    anthropic = anthropic[: anthropic.index("</tr>")]
    assert anthropic.count("needs more data") == 6 and "n = 4: fewer samples" in anthropic
    assert "650 ms" not in anthropic  # the point estimate from 4 probes is never printed


def test_every_header_sorts_by_link_and_links_its_definition(site):
    html = Client().get("/", {"sort": "tps", "dir": "desc", "q": "deep"}).content.decode()
    for key in ("ttft_p50", "ttft_p90", "tps", "availability", "error_rate", "cache_hit", "price_effective", "n"):
        assert f'href="/leaderboard/definitions/#{key}"' in html
    assert 'aria-sort="descending"' in html and 'href="/?q=deep&amp;sort=tps&amp;dir=asc"' in html
    assert _rows(html)[:2] == ["deepseek", "siliconflow"]  # 62 tok/s before 35, filtered by "deep"
    definitions = Client().get("/leaderboard/definitions/").content.decode()
    assert 'id="ttft_p90"' in definitions and "n = 30" in definitions  # evaluation's minimum for p90


def test_unknown_filters_are_named_and_ignored(site):
    html = Client().get("/", {"region": "mars", "window": "5y", "sort": "vibes"}).content.decode()
    assert "Unknown region “mars”" in html and "Unknown window “5y”" in html and "Cannot sort by “vibes”" in html
    assert len(_rows(html)) == 3


def test_model_page_compares_regions_and_offering_page_has_its_history(site):
    deepseek = site[0]
    html = Client().get("/models/deepseek-v4-flash/").content.decode()
    regions = html[html.index('id="regions-title"') :]
    assert (
        'data-label="Beijing"><span class="v">380 ms' in regions
        and 'data-label="Shanghai"><span class="v">450 ms' in regions
    )
    offering = Client().get(f"/offerings/{deepseek.pk}/")
    assert offering.status_code == 200 and offering.context["trend"]["series"][0]["offering_id"] == deepseek.pk
    assert offering.context["trend"]["incidents"][0]["metric"] == "ttft"
    assert Client().get("/offerings/999999/").status_code == 404


def test_trend_json_per_metric_and_window(site):
    body = Client().get("/leaderboard/trend.json", {"metric": "tps", "trend_window": "24h"}).json()
    assert body["metric"] == "tps" and len(body["series"]) == 2
    assert all(len(s["values"]) == len(body["labels"]) for s in body["series"])
    assert body["labels"] == sorted(body["labels"]) and len(set(body["labels"])) == len(body["labels"])
    bad = Client().get("/leaderboard/trend.json", {"metric": "vibes"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_choice"
