"""Known English strings that once stayed English on zh-Hans pages, checked on every page of the site.

``test_translations`` catches any English word outside an allow-list; that list has to let data words
through (model and provider names, the gateway's route reason), and region names and the route mode
``balanced`` slipped through it that way. This catalog names such strings outright: none may appear in
the visible text of a zh-Hans page."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.frontend.site import populate
from tests.frontend.test_translations import visible_text

pytestmark = pytest.mark.django_db

KNOWN_ENGLISH = (
    # regions (settings.TOKENWAY_REGIONS) and route modes (tenants.models.RouteMode), shown as names
    "Beijing",
    "Shanghai",
    "Shenzhen",
    "Chengdu",
    "Balanced",
    "Performance",
    "Quality",
    # the console's own words that once were missing from the catalog
    "Requests (30 days)",
    "Succeeded",
    "Refunded",
    "Partly refunded",
    "Disputed",
    "Skip to content",
    "Skip to table",
    "asked for",
    "Monthly spend limit",
    "held by calls in flight",
    "Clear filters",
    "Any time",
    "The books",
    "holds",
    "off by",
    "Cash received",
    "Credits granted",
    "Liability",
    "Uncollected",
    "invoice imports",
    "after probe spend",
)
# Lower-case slugs are data in ids and URLs; as words of the visible text they are untranslated names.
KNOWN_SLUGS = ("beijing", "shanghai", "shenzhen", "chengdu", "balanced")


def _found(text: str) -> list[str]:
    words = [s for s in KNOWN_ENGLISH if s in text]
    words += [s for s in KNOWN_SLUGS if re.search(rf"(?<![\w/.=-]){s}(?![\w/.-])", text)]
    return words


def test_no_known_english_string_on_a_zh_hans_page(personas, catalog, redis_client):
    pages = populate(personas, catalog)
    left: dict[str, list[str]] = {}
    for page in pages:
        client = Client(HTTP_ACCEPT_LANGUAGE="zh-Hans")
        if page.who != "anonymous":
            client.force_login(personas.owner if page.who == "owner" else personas.staff)
        response = client.get(page.url)
        assert response.status_code == page.status, page.url
        if found := _found(" ".join(visible_text(response.content.decode()).split())):
            left[page.name] = found
    assert not left, f"known English strings on zh-Hans pages: {left}"


def test_the_catalog_sees_a_region_and_a_route_mode():
    assert _found("区域 Beijing · 模式 balanced") == ["Beijing", "balanced"]
    assert _found("区域 北京 · 模式 均衡 /console/acme/requests/?region=beijing") == []
