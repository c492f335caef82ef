"""WCAG 2.2 AA in a real browser, beyond axe-core (which runs on every page of the page walk,
tests/frontend/e2e/test_pages_browser.py): the first tab stop is a skip link that lands on the content, the
board's table is three stops away, and the one-time key's Copy button is the first stop after the key appears."""

from __future__ import annotations

import pytest

from tests.frontend.e2e.axe import axe_install, axe_script, axe_serious
from tests.frontend.e2e.conftest import login_cookie
from tests.frontend.site import populate

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LANGUAGES = {"en": "en-US,en;q=0.9", "zh-hans": "zh-CN,zh;q=0.9"}


@pytest.fixture(autouse=True)
def _axe_present():
    if axe_script() is None:
        pytest.skip("axe-core is not installed: run `npm ci` in frontend/ (a devDependency in package.json)")


def _context(browser, live_url, language: str, width: int, cookie):
    context = browser.new_context(
        base_url=live_url,
        viewport={"width": width, "height": 900},
        extra_http_headers={"Accept-Language": LANGUAGES[language]},
    )
    if cookie:
        context.add_cookies([cookie])
    axe_install(context)
    return context


def test_the_first_tab_stop_skips_to_the_content(browser, live_url, transactional_db, redis_client, personas):
    context = _context(browser, live_url, "en", 1440, login_cookie(personas.owner, live_url))
    page = context.new_page()
    for path, target in (("/console/acme/requests/", "console-main"), ("/leaderboard/", "main")):
        page.goto(path)
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.className") == "skip-link"
        assert page.locator(".skip-link").first.is_visible()  # shown when focused
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == target
        page.keyboard.press("Tab")  # the next stop is inside the content, past the header and side navigation
        inside = page.evaluate(f"document.getElementById('{target}').contains(document.activeElement)")
        assert inside, path
    context.close()


def test_the_board_table_is_three_tab_stops_away(browser, live_url, transactional_db, redis_client, personas, catalog):
    """Skip to content, skip to table, then the first sortable header: not the 36th stop behind the filters
    and the charts' buttons."""
    populate(personas, catalog)
    context = _context(browser, live_url, "en", 1440, None)
    page = context.new_page()
    for path in ("/", "/models/deepseek-v4-flash/"):
        page.goto(path)
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Skip to table"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "lb-table"
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.matches('th a.sort')"), path
        assert page.evaluate("document.activeElement.closest('th').dataset.key") == "model"
    context.close()


def test_the_one_time_key_copy_button_is_the_next_tab_stop(
    browser, live_url, transactional_db, redis_client, personas, catalog
):
    context = _context(browser, live_url, "en", 1440, login_cookie(personas.developer, live_url))
    page = context.new_page()
    page.goto("/console/acme/keys/")
    page.fill("input[name=name]", "ci runner")
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#new-key-value")
    assert page.evaluate("document.activeElement.id") == "new-key"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "new-key-value"  # the key itself, readable
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.copy") == "new-key-value"
    assert axe_serious(page) == []
    context.close()
