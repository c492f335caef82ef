"""Every page in a real browser, in English and Simplified Chinese, at 360 px and 1440 px: the expected
status, no console errors, no failed requests, no sideways page scroll, no serious or critical WCAG 2.2 AA
violation found by axe-core (tests/frontend/e2e/axe.py); a screenshot of each under
artifacts/screenshots/<lang>-<width>/ (README, Tests)."""

from __future__ import annotations

import pytest

from tests.frontend.e2e.axe import axe_install, axe_serious
from tests.frontend.e2e.conftest import SHOTS, login_cookie
from tests.frontend.site import populate

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # about a minute per language × width on 2 busy cores

LANGUAGES = {"en": "en-US,en;q=0.9", "zh-hans": "zh-CN,zh;q=0.9"}


def _context(browser, live_url, language: str, width: int, cookie: dict[str, str] | None):
    context = browser.new_context(
        base_url=live_url,
        viewport={"width": width, "height": 900},
        locale="zh-CN" if language == "zh-hans" else "en-US",
        extra_http_headers={"Accept-Language": LANGUAGES[language]},
    )
    if cookie:
        context.add_cookies([cookie])
    axe_install(context)  # axe-core is a devDependency (npm ci in frontend/): missing, the walk fails
    return context


def _visit(page, site_page, problems: list[str]) -> None:
    errors: list[str] = []
    failed: list[str] = []

    def console(msg) -> None:
        expected = site_page.status != 200 and msg.location.get("url", "").endswith(site_page.url)
        if msg.type == "error" and not expected:  # the browser logs the expected 404 of the page itself
            errors.append(msg.text)

    page.on("console", console)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("requestfailed", lambda req: failed.append(f"{req.url} {req.failure}"))

    def bad_response(response) -> None:
        if response.status >= 400 and not (
            response.request.is_navigation_request() and response.status == site_page.status
        ):
            failed.append(f"{response.status} {response.url}")

    page.on("response", bad_response)
    response = page.goto(site_page.url)
    page.wait_for_load_state("networkidle")
    if response is None or response.status != site_page.status:
        problems.append(f"{site_page.name}: status {response.status if response else None}")
    width = page.evaluate("document.documentElement.scrollWidth")
    viewport = page.viewport_size["width"]
    if width > viewport:
        problems.append(f"{site_page.name}: page scrolls sideways ({width} px > {viewport} px)")
    problems.extend(f"{site_page.name}: console error {e}" for e in errors)
    problems.extend(f"{site_page.name}: failed request {f}" for f in failed)
    problems.extend(
        f"{site_page.name}: axe {v['impact']} {v['id']} ({v['help']}) {v['nodes']}" for v in axe_serious(page)
    )


@pytest.mark.parametrize("width", [360, 1440])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_page(browser, live_url, transactional_db, redis_client, personas, catalog, language, width):
    pages = populate(personas, catalog)
    folder = SHOTS / f"{language}-{width}"
    folder.mkdir(parents=True, exist_ok=True)
    cookies = {
        "anonymous": None,
        "owner": login_cookie(personas.owner, live_url),
        "staff": login_cookie(personas.staff, live_url),
    }
    problems: list[str] = []
    for who, cookie in cookies.items():
        context = _context(browser, live_url, language, width, cookie)
        for site_page in (p for p in pages if p.who == who):
            page = context.new_page()  # a fresh page per visit: its listeners see this page only
            _visit(page, site_page, problems)
            page.screenshot(path=str(folder / f"{site_page.name}.png"), full_page=True)
            lang = page.locator("html").get_attribute("lang")
            if lang != language:
                problems.append(f"{site_page.name}: html lang {lang}")
            page.close()
        context.close()
    assert not problems, "\n".join(problems)
