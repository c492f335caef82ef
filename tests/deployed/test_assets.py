"""Every asset each page names (stylesheets, scripts, images, icons) answers 200 from the running
stack, from this machine only, and static files carry long-lived cache headers."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
import requests

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.timeout(600)]

PUBLIC_PAGES = ["/", "/leaderboard/", "/models/deepseek-v3.2/", "/accounts/login/", "/accounts/signup/",
                "/api/docs/"]  # fmt: skip
DEMO_PAGES = [
    "/console/demo/",
    *(
        f"/console/demo/{p}/"
        for p in ("keys", "usage", "requests", "playground", "billing", "team", "routing", "credentials")
    ),
]
STAFF_PAGES = ["/ops/billing/", "/admin/"]
YEAR_S = 365 * 24 * 3600


class _Assets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "link" and found.get("href") and "canonical" not in (found.get("rel") or ""):
            self.urls.append(found["href"] or "")
        elif tag in ("script", "img", "source") and found.get("src"):
            self.urls.append(found["src"] or "")


def _assets(session: requests.Session, base: str, page: str) -> list[str]:
    response = session.get(base + page, timeout=20)
    assert response.status_code == 200, f"{page}: {response.status_code}"
    parser = _Assets()
    parser.feed(response.text)
    assert parser.urls, f"{page} names no assets at all"
    return [urljoin(base + page, url) for url in parser.urls]


def _max_age(cache_control: str) -> int:
    match = re.search(r"max-age=(\d+)", cache_control)
    return int(match.group(1)) if match else 0


def _check(session: requests.Session, base: str, pages: list[str]) -> list[str]:
    problems = []
    for page in pages:
        for url in _assets(session, base, page):
            if urlsplit(url).scheme == "data":  # inline, nothing to fetch
                continue
            if urlsplit(url).netloc != urlsplit(base).netloc:
                problems.append(f"{page} loads {url} from outside the machine")
                continue
            response = session.get(url, timeout=20)
            if response.status_code != 200:
                problems.append(f"{page} -> {url}: {response.status_code}")
            elif (
                urlsplit(url).path.startswith("/static/")
                and _max_age(response.headers.get("cache-control", "")) < YEAR_S
            ):
                problems.append(f"{page} -> {url}: cache-control {response.headers.get('cache-control')!r}")
    return problems


def test_every_asset_of_every_public_page_answers_with_long_lived_caching(stack):
    assert _check(requests.Session(), stack.base_url, PUBLIC_PAGES) == []


def test_every_asset_of_every_console_page_answers(stack, demo_session):
    assert _check(demo_session, stack.base_url, DEMO_PAGES) == []


def test_every_asset_of_the_admin_pages_answers(stack, staff_session):
    assert _check(staff_session, stack.base_url, STAFF_PAGES) == []
