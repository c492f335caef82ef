"""Assets as production serves them: every file a page names answers 200 under its hashed name with a
far-future cache header, and no page (API docs included) loads anything from outside the machine."""

from __future__ import annotations

import re

import pytest

ASSET = re.compile(r"""(?:src|href)=["']([^"']+)["']""")
YEAR_S = 365 * 24 * 3600


def _assets(html: str) -> list[str]:
    return [url for url in ASSET.findall(html) if url.startswith("/static/")]


def _external(html: str) -> list[str]:
    return [url for url in ASSET.findall(html) if url.startswith(("http://", "https://", "//"))]


@pytest.mark.django_db
@pytest.mark.parametrize("page", ["/", "/leaderboard/", "/api/docs/", "/accounts/login/", "/accounts/signup/"])
def test_every_asset_a_page_names_is_served_hashed_and_cached_for_a_year(client, page):
    response = client.get(page)
    assert response.status_code == 200
    html = response.content.decode()
    assets = _assets(html)
    assert assets, f"{page} names no static asset"
    assert _external(html) == []
    for url in assets:
        assert re.search(r"\.[0-9a-f]{12}\.", url), f"{url} is not a hashed name"
        asset = client.get(url)
        assert asset.status_code == 200, url
        assert int(asset["Content-Length"]) > 0, url
        max_age = int(re.search(r"max-age=(\d+)", asset["Cache-Control"]).group(1))
        assert max_age >= YEAR_S, (url, asset["Cache-Control"])


@pytest.mark.django_db
def test_swagger_ui_is_bundled_not_loaded_from_a_cdn(client):
    html = client.get("/api/docs/").content.decode()
    assert "swagger-ui-bundle" in html
    assert "cdn" not in html.lower()
    bundle = next(url for url in _assets(html) if "swagger-ui-bundle" in url)
    assert client.get(bundle).status_code == 200


@pytest.mark.django_db
def test_an_unhashed_or_unknown_asset_is_404_not_a_stale_copy(client):
    assert client.get("/static/frontend/no-such-file.js").status_code == 404
