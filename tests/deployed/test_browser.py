"""A person's walk through the running stack in headless Chromium (Debian's, driven by Playwright):
leaderboard, sign-up, console (keys, usage, logs, playground, top-up), the staff dashboards and the
API docs, with zero console errors and zero failed requests on every page."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import pytest

from tests.deployed.conftest import STAFF_LOGIN
from tests.frontend.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, _ensure_chromium

# Not marked `browser`: tests/conftest.py moves those to the end of the run, which would split this
# package and start a second stack. Playwright's loop lives only as long as this module's browser.
pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.timeout(600)]
PASSWORD = "walk-the-stack-123"
LIVE_MS = 20_000  # websocket push / Stripe webhook on a busy machine


class Walk:
    """One browser context; every console error, page error, failed or >= 400 request is kept."""

    def __init__(self, context, base_url: str) -> None:
        self.page = context.new_page()
        self.base_url = base_url
        self.problems: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.problems.append(f"{self.page.url}: page error {exc}"))
        self.page.on("requestfailed", self._failed)
        self.page.on("response", self._response)

    def _console(self, message) -> None:
        if message.type == "error":
            where = (message.location or {}).get("url", "")
            self.problems.append(f"{self.page.url}: console error {message.text} {where}")

    def _failed(self, request) -> None:
        if request.failure != "net::ERR_ABORTED":  # a navigation that cancels the previous page's fetches
            self.problems.append(f"{self.page.url}: {request.method} {request.url} failed ({request.failure})")

    def _response(self, response) -> None:
        if response.status >= 400:
            self.problems.append(f"{self.page.url}: {response.request.method} {response.url} -> {response.status}")

    def open(self, path: str, *, live: bool = False) -> None:
        response = self.page.goto(path)
        assert response is not None and response.status == 200, f"{path}: {response and response.status}"
        self.page.wait_for_load_state("load")
        if live:
            self.page.wait_for_selector("#tenant-live.live-on", timeout=LIVE_MS)


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    reason = _ensure_chromium()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def walk(chromium, stack) -> Iterator[Walk]:
    context = chromium.new_context(base_url=stack.base_url, viewport={"width": 1280, "height": 900}, locale="en-US")
    walker = Walk(context, stack.base_url)
    yield walker
    context.close()
    assert walker.problems == []


def _sign_up_and_create_tenant(walk: Walk, slug: str) -> None:
    page = walk.page
    walk.open("/accounts/signup/")
    page.fill("input[name=email]", f"{slug}@walk.test")
    for index in range(page.locator("input[type=password]").count()):
        page.fill(f"input[type=password] >> nth={index}", PASSWORD)
    page.click("form button[type=submit]")
    page.wait_for_load_state("load")
    walk.open("/console/new/")
    page.fill("input[name=name]", slug.title())
    page.fill("input[name=slug]", slug)
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"**/console/{slug}/")


def _top_up(walk: Walk, slug: str) -> None:
    page = walk.page
    walk.open(f"/console/{slug}/billing/", live=True)
    page.fill("input[name=amount]", "20")
    page.click("#topup-submit")
    page.wait_for_selector("#topup-progress[data-status=succeeded]", timeout=LIVE_MS)
    page.wait_for_function("document.getElementById('balance').textContent === '$20.000000'", timeout=LIVE_MS)


def _create_key(walk: Walk, slug: str) -> None:
    page = walk.page
    walk.open(f"/console/{slug}/keys/", live=True)
    page.fill("input[name=name]", "walk")
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#new-key-value")
    assert page.inner_text("#new-key-value").startswith("tw_")


def _playground(walk: Walk, slug: str) -> str:
    page = walk.page
    walk.open(f"/console/{slug}/playground/", live=True)
    page.click("#pg-newkey")
    page.wait_for_function("document.getElementById('pg-key').value.startsWith('tw_')")
    page.select_option("#pg-model", "deepseek-v3.2")
    page.click("#pg-send")
    page.wait_for_function("document.getElementById('playground').dataset.done === '1'", timeout=60_000)
    assert not page.locator("#pg-chat .msg.error").count(), page.inner_text("#pg-chat")
    return page.inner_text("#pg-rid")


def _request_log_shows(walk: Walk, slug: str, request_id: str) -> None:
    """The request lands in the log within seconds (reloading, as a person would)."""
    deadline = time.monotonic() + LIVE_MS / 1000
    row = f"tr[data-request-id='{request_id}']"
    while True:
        walk.open(f"/console/{slug}/requests/", live=True)
        if walk.page.locator(row).count() or time.monotonic() > deadline:
            break
        walk.page.wait_for_timeout(2000)
    assert walk.page.locator(row).count() == 1, walk.page.inner_text("main")


def test_leaderboard_pages(walk):
    walk.open("/")
    walk.page.wait_for_function("document.querySelectorAll('canvas').length > 0")
    walk.open("/models/deepseek-v3.2/")


def test_sign_up_top_up_key_playground_usage_and_request_log(walk):
    slug = f"walk{secrets.token_hex(3)}"
    _sign_up_and_create_tenant(walk, slug)
    _top_up(walk, slug)
    _create_key(walk, slug)
    request_id = _playground(walk, slug)
    _request_log_shows(walk, slug, request_id)
    walk.open(f"/console/{slug}/usage/", live=True)
    walk.open(f"/console/{slug}/", live=True)


def test_staff_sees_the_billing_dashboard_and_the_admin(walk):
    page = walk.page
    walk.open("/accounts/login/")
    page.fill("input[name=username]", STAFF_LOGIN[0])
    page.fill("input[name=password]", STAFF_LOGIN[1])
    page.click("form button[type=submit]")
    page.wait_for_load_state("load")
    walk.open("/ops/billing/")
    page.wait_for_function("window.twCharts && Object.keys(window.twCharts).length > 0")
    walk.open("/admin/")
    assert page.locator("#site-name").count() == 1


def test_api_docs_render_the_schema_without_the_internet(walk):
    walk.open("/api/docs/")
    walk.page.wait_for_selector(".swagger-ui .info .title", timeout=LIVE_MS)
    walk.page.wait_for_selector(".swagger-ui .opblock", timeout=LIVE_MS)
