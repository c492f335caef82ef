"""Leaderboard in a real browser: charts render, filter and sort work, live refresh, phone width."""

from __future__ import annotations

import pytest
from django.utils import timezone

from contracts.redis_keys import LEADERBOARD_GROUP
from tests.frontend.e2e.conftest import group_send, shot

pytestmark = pytest.mark.browser


def _measure(offering, *, ttft: float, tps: float, n: int, hit: float = 0.0, flags=()):
    from evaluation.models import Aggregate

    metric = lambda v: {"value": v, "lo": v * 0.9, "hi": v * 1.1, "n": n}  # noqa: E731
    metrics = {
        "ttft_p50": metric(ttft), "ttft_p90": metric(ttft * 1.8), "tps": metric(tps), "availability": metric(0.995),
        "error_rate": metric(0.01), "cache_hit_ratio": metric(hit),
    }  # fmt: skip
    return Aggregate.objects.update_or_create(
        offering_id=offering.pk,
        region="all",
        window="24h",
        defaults={"computed_at": timezone.now(), "n": n, "metrics": metrics, "flags": list(flags)},
    )


@pytest.fixture
def measured(catalog):
    deepseek, silicon, anthropic = catalog
    _measure(deepseek, ttft=420, tps=62, n=120, hit=0.8)
    _measure(silicon, ttft=910, tps=35, n=80, flags=["price_mismatch"])
    _measure(anthropic, ttft=650, tps=48, n=60, hit=0.1, flags=["billing_block_breaks_cache"])
    return catalog


def _visible_providers(page) -> list[str]:
    return page.eval_on_selector_all(
        "#lb-rows tr[data-model]:not([hidden])", "rows => rows.map(r => r.dataset.provider)"
    )


def test_leaderboard_charts_filter_and_sort(page, measured):
    page.goto("/")
    page.wait_for_function("window.twLeaderboard && window.twLeaderboard.charts.scatter")
    points = page.evaluate("window.twLeaderboard.charts.scatter.data.datasets.map(d => d.data.length)")
    assert sum(points) == 3 and len(points) == 3  # one bubble per offering, one colour per provider
    assert page.locator(".badge", has_text="billing block breaks cache").count() == 1
    assert page.locator(".badge", has_text="price anomaly").count() == 1
    page.wait_for_selector("#lb-live.live-on")
    shot(page, "leaderboard")

    page.fill("input[name=q]", "silicon")
    assert _visible_providers(page) == ["siliconflow"]
    assert page.evaluate("window.twLeaderboard.charts.scatter.data.datasets.length") == 1
    page.fill("input[name=q]", "")
    page.select_option("select[name=model]", "deepseek-v4-flash")
    assert sorted(_visible_providers(page)) == ["deepseek", "siliconflow"]
    page.select_option("select[name=model]", "")

    page.click("th[data-key=ttft_p50]")
    assert _visible_providers(page) == ["deepseek", "anthropic", "siliconflow"]
    page.click("th[data-key=ttft_p50]")
    assert _visible_providers(page) == ["siliconflow", "anthropic", "deepseek"]
    page.click("th[data-key=tps]")
    assert _visible_providers(page) == ["siliconflow", "anthropic", "deepseek"]
    assert page.get_attribute("th[data-key=tps]", "aria-sort") == "ascending"


def test_leaderboard_refreshes_live_when_aggregates_change(page, measured):
    page.goto("/leaderboard/")
    page.wait_for_selector("#lb-live.live-on")
    _measure(measured[1], ttft=111, tps=99, n=500)
    group_send(LEADERBOARD_GROUP, {"type": "leaderboard.updated", "version": 2})
    page.wait_for_function("window.twLeaderboard.refreshes >= 1")
    assert "111 ms" in page.inner_text("#lb-rows tr[data-provider=siliconflow]")


def test_model_and_provider_pages(page, measured):
    page.goto("/models/deepseek-v4-flash/")
    page.wait_for_function("window.twLeaderboard && window.twLeaderboard.charts.scatter")
    assert sorted(_visible_providers(page)) == ["deepseek", "siliconflow"]
    shot(page, "model-page")
    page.goto("/providers/anthropic/")
    assert _visible_providers(page) == ["anthropic"]
    shot(page, "provider-page")


def test_leaderboard_at_phone_width_in_chinese(browser, live_url, transactional_db, measured, redis_client):
    context = browser.new_context(
        base_url=live_url,
        viewport={"width": 390, "height": 844},
        locale="zh-CN",
        extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9"},
    )
    page = context.new_page()
    page.goto("/")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert "排行榜" in page.inner_text("header")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"page scrolls sideways at phone width ({width}px)"
    shot(page, "leaderboard-phone-zh")
    context.close()


def test_keyboard_sort_url_legend_trends_and_model_page_refresh(page, personas, catalog):
    from tests.frontend.site import populate

    populate(personas, catalog)
    page.goto("/")
    page.wait_for_function("window.twLeaderboard && window.twLeaderboard.charts.scatter")
    page.evaluate("window.samePage = true")
    page.focus("th[data-key=tps] a.sort")  # headers are links: reachable and operable by keyboard
    page.keyboard.press("Enter")
    page.wait_for_function("location.search.includes('sort=tps') && location.search.includes('dir=asc')")
    assert page.evaluate("window.samePage === true")  # sorted in place, not reloaded
    assert _visible_providers(page)[:2] == ["siliconflow", "deepseek"]
    page.fill("input[name=q]", "silicon")
    page.wait_for_function("location.search.includes('q=silicon')")  # the filter is in the URL too
    page.fill("input[name=q]", "")

    legend = "#scatter-legend [data-provider=deepseek]"
    page.focus(legend)
    page.keyboard.press("Enter")  # hide a provider from the scatter
    assert page.get_attribute(legend, "aria-pressed") == "false"
    assert page.evaluate("window.twLeaderboard.charts.scatter.data.datasets.map(d => d.label)") == ["SiliconFlow"]
    assert "1" in page.inner_text("#scatter-summary")

    page.click("[data-trend-metric=tps]")
    page.wait_for_function("window.twLeaderboard.trend.metric === 'tps'")
    assert page.evaluate("window.twLeaderboard.charts.trend.data.datasets.length") == 2
    assert "DeepSeek" in page.inner_text("#trend-incidents")  # the incident is listed as text as well

    page.goto("/models/claude-sonnet-4.5/")
    page.wait_for_selector("#lb-live.live-on")
    group_send(LEADERBOARD_GROUP, {"type": "leaderboard.updated", "version": 3})
    page.wait_for_function("window.twLeaderboard.refreshes >= 1")
    assert _visible_providers(page) == ["anthropic"]  # a live refresh keeps the page's own model
