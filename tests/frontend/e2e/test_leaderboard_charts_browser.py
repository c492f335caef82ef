"""The leaderboard's pages in Chromium at 360 and 1440 px, English and Simplified Chinese: no sideways
scroll, no console error, no English left in the zh-Hans DOM once the scripts have drawn (legends, notes);
and charts people can read: a colour and dash per trend line, a legend that wraps or scrolls, outliers
clipped with a note naming them, the injected incident drawn on the trend."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from catalog.models import Offering, OfferingPrice
from tests.frontend.site import measure, populate
from tests.frontend.test_translations import ALLOWED, english_words

pytestmark = pytest.mark.browser

LANGUAGES = {"en": "en-US,en;q=0.9", "zh-hans": "zh-CN,zh;q=0.9"}


@pytest.fixture
def board(personas, catalog):
    """The site's data, three more offerings (one 9 s to its first token: an outlier) and a one-hour TTFT spike."""
    from django.db import transaction

    from evaluation.models import ProbeKind, ProbeResult
    from evaluation.services.rollup import rollups_add

    populate(personas, catalog)
    deepseek, silicon, anthropic = catalog
    flash, sonnet = deepseek.model, anthropic.model
    for model, provider, ttft, tps in (
        (flash, anthropic.provider, 9000, 20),
        (sonnet, deepseek.provider, 700, 55),
        (sonnet, silicon.provider, 800, 40),
    ):
        offering = Offering.objects.create(
            model=model,
            provider=provider,
            upstream_model=model.slug,
            context_window=model.context_window,
            max_output=model.max_output,
        )
        OfferingPrice.objects.create(offering=offering, version=1, input=500_000, output=2_000_000)
        measure(offering, ttft=ttft, tps=tps, n=50)
    spike = timezone.now() - dt.timedelta(hours=6, minutes=30)
    rows = [
        ProbeResult(
            offering_id=silicon.pk,
            region="beijing",
            kind=ProbeKind.PERFORMANCE,
            variant="1k",
            started_at=spike + dt.timedelta(seconds=k),
            ttft_ms=30_000,
            tps=30,
            total_ms=40_000,
            input_tokens=1000,
            output_tokens=200,
        )
        for k in range(20)
    ]
    with transaction.atomic():
        ProbeResult.objects.bulk_create(rows)
        rollups_add(rows)
    return catalog


def _open(browser, live_url, language: str, width: int):
    context = browser.new_context(
        base_url=live_url,
        viewport={"width": width, "height": 900},
        locale="zh-CN" if language == "zh-hans" else "en-US",
        extra_http_headers={"Accept-Language": LANGUAGES[language]},
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return context, page, errors


@pytest.mark.parametrize("width", [360, 1440])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_board_pages_fit_and_speak_the_language(
    browser, live_url, transactional_db, redis_client, board, language, width
):
    deepseek = board[0]
    names = {o.model.name.lower() for o in Offering.objects.all()} | {o.provider.name.lower() for o in board}
    allowed = ALLOWED | {w.lower() for name in names for w in name.split()} | {"json", "mode", "tools", "fp8"}
    context, page, errors = _open(browser, live_url, language, width)
    problems: list[str] = []
    for url in (
        "/",
        f"/offerings/{deepseek.pk}/",
        "/models/deepseek-v4-flash/",
        "/providers/siliconflow/",
        "/leaderboard/definitions/",
        "/?sort=price_output&dir=desc&param=tools",
    ):
        page.goto(url)
        page.wait_for_load_state("networkidle")
        if "definitions" not in url:
            page.wait_for_function("window.twLeaderboard && window.twLeaderboard.charts.trend !== undefined")
        scroll = page.evaluate("document.documentElement.scrollWidth")
        if scroll > width:
            problems.append(f"{url}: {scroll} px wide at {width} px")
        if language == "zh-hans" and (found := english_words(page.content(), allowed)):
            problems.append(f"{url}: English left {found}")
    context.close()
    assert not problems and not errors, (problems, errors)


def test_charts_people_can_read(page, redis_client, board):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto("/")
    page.wait_for_function(
        "window.twLeaderboard && window.twLeaderboard.charts.scatter && window.twLeaderboard.charts.trend"
    )
    # the 9 s offering sits on the clipped axis's edge, named in the note; the others keep the plot's width
    note = page.inner_text("#scatter-clipped")
    assert "9000 ms" in note and "DeepSeek V4 Flash · Anthropic" in note
    assert page.evaluate("window.twLeaderboard.charts.scatter.scales.x.max") < 9000

    styles = page.evaluate("""window.twLeaderboard.charts.trend.data.datasets
        .filter((d) => d.raw).map((d) => d.borderColor + '|' + d.borderDash.join(','))""")
    assert len(styles) >= 2 and len(set(styles)) == len(styles)  # every line its own colour and dash
    legend = page.evaluate("""(() => { const b = document.getElementById('trend-legend');
        return { items: b.children.length, wide: b.scrollWidth > b.clientWidth, overflow: getComputedStyle(b).overflowY }; })()""")
    assert legend == {"items": len(styles), "wide": False, "overflow": "auto"}  # wraps, scrolls past three rows

    assert "SiliconFlow" in page.inner_text("#trend-clipped")  # the 30 s spike, clipped and named
    marks = page.evaluate("window.twLeaderboard.charts.trend.options.plugins.incidents.marks")
    assert len(marks) == 1 and marks[0]["metric"] == "ttft"  # the incident opened three hours ago
    red = page.evaluate("""(() => {
        const chart = window.twLeaderboard.charts.trend, m = chart.options.plugins.incidents.marks[0];
        const x = Math.round(chart.scales.x.getPixelForValue(m.index) * devicePixelRatio);
        const { top, bottom } = chart.chartArea, ctx = chart.canvas.getContext('2d');
        let hits = 0;
        for (let y = Math.round(top * devicePixelRatio); y < bottom * devicePixelRatio; y += 2) {
          const [r, g, b] = ctx.getImageData(x, y, 1, 1).data;
          if (r > 150 && g < 90 && b < 90) hits += 1;
        }
        return hits; })()""")
    assert red > 10, "the incident marker is not drawn"
    assert "DeepSeek" in page.inner_text("#trend-incidents")
