"""What a buyer compares, on the board and the offering page, from real rows: quality with n and interval,
TTFT p99 and the TTFT / speed distributions from the probes' rollups, context, max output, parameters,
quantisation, four prices, tokens served; sorting and filtering by them in the URL; per-region cells with
n and interval; the injected incident on the offering page. Then the page cost: gzip and the body cached
per published stats version."""

from __future__ import annotations

import gzip
import json
import time

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client
from django.utils import translation

from catalog.models import OfferingPrice
from contracts import redis_keys
from contracts.usage import Tokens
from evaluation.board_reads import latency_distributions
from evaluation.services.refresh import BOARD_PRERENDER_TASK, board_prerender_enqueue
from foundation.redis_client import get_broker_redis
from frontend.data import board_cache
from frontend.data.leaderboard import KINDS, WINDOWS
from frontend.data.offering_facts import quantisation
from frontend.prerender import board_prerender, prerender_request
from frontend.tasks import board_prerender_task
from metering.ingest import usage_ingest
from tests.factories import issue_key
from tests.frontend.site import measure, populate
from tests.metering.conftest import make_event

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_page_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def site(personas, catalog, redis_client):
    from evaluation.models import Aggregate

    populate(personas, catalog)
    deepseek = catalog[0]
    agg = Aggregate.objects.get(offering_id=deepseek.pk, region="all", window="24h")
    agg.metrics["quality_score"] = {"value": 0.85, "lo": 0.78, "hi": 0.9, "n": 60}
    agg.metrics["ttft_p99"] = {"value": 1400.0, "lo": 1200.0, "hi": 1700.0, "n": 120}
    agg.save()
    deepseek.parameters, deepseek.upstream_model = ["tools", "json_mode"], "DeepSeek-V4-Flash-FP8"
    deepseek.save()
    OfferingPrice.objects.filter(offering=deepseek).update(cache_write_5m=350_000)
    key = issue_key(personas.tenant, name="served")[0]
    tokens = Tokens(input_uncached=1_000_000, cache_read=500_000, output=250_000)
    old = make_event(
        personas.tenant.pk, key.pk, offering_id=deepseek.pk, tokens=tokens, finished_at=time.time() - 3 * 86400
    )
    new = make_event(personas.tenant.pk, key.pk, offering_id=deepseek.pk, tokens=tokens, finished_at=time.time() - 60)
    usage_ingest(events=[old, new])
    return catalog


def _row(html: str, provider: str) -> str:
    row = html[html.index(f'data-provider="{provider}"') :]
    return row[: row.index("</tr>")]


def test_board_row_shows_everything_a_buyer_compares(site):
    row = _row(Client().get("/").content.decode(), "deepseek")
    assert '<span class="v">85.0%</span><span class="ci">78.0%–90.0% · n 60</span>' in row  # quality
    assert "1,400 ms" in row and "1,200–1,700 · n 120" in row  # TTFT p99 with its interval and n
    assert (
        'aria-label="Distribution of 143 probes' in row
    )  # the rollups' histogram: 24 h × 6 probes, less this minute's
    assert 'title="128,000">128K<' in row and 'title="8,192">8.19K<' in row  # context, max output
    assert '<code class="param">json_mode</code> <code class="param">tools</code>' in row and "FP8" in row
    assert "$0.2700" in row and "$1.0800" in row and "$0.0270" in row and "write $0.3500" in row
    assert 'title="1,750,000 · 3,500,000">' in row  # tokens served: 24 h, 7 d
    silicon = _row(Client().get("/").content.decode(), "siliconflow")
    assert "quantisation not declared" in silicon and "write —" in silicon


def test_speed_tail_and_latency_quantiles_come_from_the_probes(site):
    deepseek = site[0]
    dist = latency_distributions(offering_ids=[deepseek.pk], window="24h")[deepseek.pk]
    ttft, tps = dist["ttft"], dist["tps"]
    # 24 h × 6 probes; the one started this minute is after the window's end (a whole minute)
    assert ttft["n"] == tps["n"] == 143 and len(ttft["bins"]) == 12 and sum(b[2] for b in ttft["bins"]) == 143
    assert ttft["p50"]["value"] < ttft["p90"]["value"] < ttft["p99"]["value"]
    assert tps["p50"]["value"] > tps["p90"]["value"] >= tps["p99"]["value"]  # speed's tail is the slow side
    assert ttft["p50"]["lo"] <= ttft["p50"]["value"] <= ttft["p50"]["hi"]


def test_new_columns_sort_and_filter_in_the_url(site):
    html = Client().get("/", {"sort": "price_output", "dir": "desc"}).content.decode()
    assert [c.split('"', 1)[0] for c in html.split('data-provider="')[1:4]] == ["anthropic", "siliconflow", "deepseek"]
    assert 'aria-sort="descending"' in html and 'href="/?sort=price_output&amp;dir=asc"' in html
    html = Client().get("/", {"param": "tools"}).content.decode()
    assert 'data-provider="deepseek"' in html and 'data-provider="siliconflow"' not in html
    assert '<option value="tools" selected>' in html
    html = Client().get("/", {"param": "telepathy"}).content.decode()
    assert "No offering declares the parameter “telepathy”" in html
    html = Client().get("/", {"sort": "tokens_24h", "dir": "desc"}).content.decode()
    assert html.split('data-provider="')[1].startswith("deepseek")


def test_region_cells_carry_interval_and_n(site):
    html = Client().get("/models/deepseek-v4-flash/").content.decode()
    regions = html[html.index('id="regions-title"') :]
    assert '<span class="v">380 ms</span>' in regions and "342–418 · n 40" in regions
    assert "405–495 · n 40" in regions  # shanghai 450 ms ± 10%


def test_offering_page_has_all_of_it_and_its_incidents(site):
    deepseek = site[0]
    response = Client().get(f"/offerings/{deepseek.pk}/")
    html = response.content.decode()
    facts = html[html.index('id="offering-facts"') :]
    for text in ("128,000", "8,192", "FP8", "$0.2700", "$1.0800", "$0.0270", "$0.3500", "1,750,000 · 3,500,000"):
        assert text in facts
    measured = html[html.index('id="offering-measured"') :]
    assert "85.0%" in measured and "n 60" in measured and 'aria-label="Distribution of 143 probes' in measured
    incidents = html[html.index('id="offering-incidents"') :]
    assert "TTFT" in incidents and "Beijing" in incidents and "320.0" in incidents and "540.0" in incidents
    assert f'"incidents": [{{"offering_id": {deepseek.pk}' in html  # the trend's marker, in the page's data


def test_offering_page_in_chinese_has_no_new_english(site):
    deepseek = site[0]
    html = Client(headers={"accept-language": "zh-hans"}).get(f"/offerings/{deepseek.pk}/").content.decode()
    for english in (
        "Declared",
        "Measured",
        "Quantisation",
        "Max output",
        "Tokens served",
        "Incidents (last 7 days)",
        "quantisation not declared",
        "Speed p50",
    ):
        assert english not in html, english
    assert "最大输出" in html and "量化" in html


def test_pages_are_compressed(site):
    plain = Client().get("/")
    packed = Client().get("/", headers={"accept-encoding": "gzip, br"})
    assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
    unpacked = gzip.decompress(packed.content).decode()
    assert len(unpacked.encode()) == len(plain.content) and _row(unpacked, "deepseek") == _row(
        plain.content.decode(), "deepseek"
    )
    assert len(packed.content) * 4 < len(plain.content)


def test_board_is_cached_per_published_stats_version(site, redis_client):
    deepseek = site[0]
    assert Client().get("/")["X-Board-Cache"] == "miss"  # no snapshot published yet: never cached
    assert Client().get("/")["X-Board-Cache"] == "miss"
    redis_client.incr(redis_keys.STATS_VERSION)
    first = Client().get("/")
    assert first["X-Board-Cache"] == "miss" and "420 ms" in _row(first.content.decode(), "deepseek")
    measure(deepseek, ttft=333, tps=62, n=130, hit=0.8)  # new aggregates, not yet published
    again = Client().get("/")
    assert again["X-Board-Cache"] == "hit" and "420 ms" in _row(again.content.decode(), "deepseek")
    assert Client(headers={"accept-language": "zh-hans"}).get("/")["X-Board-Cache"] == "miss"  # per language
    assert Client().get("/", {"window": "1h"})["X-Board-Cache"] == "miss"  # per window
    redis_client.incr(redis_keys.STATS_VERSION)  # the refresh publishes: the next view is the new one
    fresh = Client().get("/")
    assert fresh["X-Board-Cache"] == "miss" and "333 ms" in _row(fresh.content.decode(), "deepseek")


def test_a_publish_prerenders_the_default_views_for_every_web_process(site, redis_client):
    """After a publish the worker renders each window × language × view (no other query) into the shared
    cache, so the first visitor of the new version, on any web process, reads a cached page."""
    redis_client.incr(redis_keys.STATS_VERSION)
    # every window of both views (chat and embedding models) in English and in Chinese
    assert board_prerender() == len(WINDOWS) * len(KINDS) * 2
    assert board_prerender() == 0  # already there: nothing rendered twice
    for path in ("/", "/leaderboard/"):  # one page under two addresses, one entry
        first = Client().get(path)
        assert first["X-Board-Cache"] == "hit" and "420 ms" in _row(first.content.decode(), "deepseek")
    week = Client(headers={"accept-language": "zh-hans"}).get("/", {"window": "7d"})
    assert week["X-Board-Cache"] == "hit" and 'lang="zh-hans"' in week.content.decode()
    assert Client().get("/", {"kind": "embeddings", "window": "1h"})["X-Board-Cache"] == "hit"
    assert Client().get("/", {"sort": "tps"})["X-Board-Cache"] == "miss"  # other views render on their visit


def test_while_the_worker_renders_a_view_its_visitors_get_the_previous_version(site, redis_client):
    deepseek = site[0]
    redis_client.incr(redis_keys.STATS_VERSION)
    assert Client().get("/")["X-Board-Cache"] == "miss"
    measure(deepseek, ttft=333, tps=62, n=130, hit=0.8)
    redis_client.incr(redis_keys.STATS_VERSION)  # a publish: the worker claims the view and renders it
    with translation.override("en"):
        key = board_cache.page_key(prerender_request("24h"), path="/")
    assert key is not None and board_cache.claim(key)
    stale = Client().get("/")
    assert stale["X-Board-Cache"] == "stale" and "420 ms" in _row(stale.content.decode(), "deepseek")
    assert Client().get("/", {"window": "1h"})["X-Board-Cache"] == "miss"  # a view nobody renders: rendered now
    redis_client.delete(f"{key}:rendering")  # the worker gave up: the next visitor renders the new version
    fresh = Client().get("/")
    assert fresh["X-Board-Cache"] == "miss" and "333 ms" in _row(fresh.content.decode(), "deepseek")


def test_the_stats_publish_enqueues_the_prerender(redis_client):
    from tokenway.celery import app  # the project's app, as in the worker that publishes

    assert app.conf.broker_url == settings.CELERY_BROKER_URL
    broker = get_broker_redis()
    before = broker.llen("default")
    board_prerender_enqueue()
    assert broker.llen("default") == before + 1
    message = json.loads(broker.lindex("default", 0) or b"{}")
    assert message["headers"]["task"] == BOARD_PRERENDER_TASK == board_prerender_task.name


@pytest.mark.parametrize(
    ("upstream", "named"),
    [
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "FP8"),
        ("llama-3-70b-awq", "AWQ"),
        ("deepseek-chat", ""),
        ("glm-4.6:int4", "INT4"),
        ("kimi-k2-0905-preview", ""),
    ],
)
def test_quantisation_is_what_the_upstream_id_names(upstream, named):
    assert quantisation(upstream) == named
