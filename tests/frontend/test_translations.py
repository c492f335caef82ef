"""Every page renders completely in Simplified Chinese: no English word outside a short allow-list of
names, units and data (model, provider, tenant and key names, ids) may appear in the visible text or in
titles, labels and placeholders."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.test import Client

from tests.frontend.site import populate

pytestmark = pytest.mark.django_db

# Names, units, standards and data the pages show as they are in every language.
ALLOWED = {
    "tokenway", "ttft", "p50", "p90", "p99", "tok", "api", "usd", "stripe", "csv", "json", "sdk", "byok", "url",
    "openai", "anthropic", "claude", "deepseek", "siliconflow", "sonnet", "flash", "acme", "globex", "ms", "http",
    "https", "email", "beijing", "shanghai", "shenzhen", "chengdu", "token", "get", "post", "cusum", "wilson",
    "code", "mars",  # "Claude Code" and the unknown region the filtered page names
    "english",  # the language switch names each language in itself
    "balanced", "cheapest", "healthy",  # the request record's route mode and reason, as the gateway wrote them
    "embeddings", "dimensions",  # catalog parameters as the API spells them (the parameter filter's options)
}  # fmt: skip
WORD = re.compile(r"[A-Za-z][A-Za-z']{2,}")
SKIP_TAGS = {"script", "style", "code", "pre", "noscript"}
ATTRS = {"title", "placeholder", "aria-label", "alt"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIP_TAGS:
            self.skip += 1
        self.parts.extend(value or "" for name, value in attrs if name in ATTRS)
        if tag == "input" and dict(attrs).get("type") in ("submit", "button"):
            self.parts.append(dict(attrs).get("value") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIP_TAGS and self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    text = " ".join(parser.parts)
    return re.sub(
        r"\S+@\S+|https?://\S+|/\S*|\b[\w-]+\.(?:test|com|io)\b|\S*_\S*|\S*\w-\w\S*", " ", text
    )  # addresses, paths, ids


def english_words(html: str, allowed: set[str]) -> list[str]:
    return sorted({w for w in WORD.findall(visible_text(html)) if w.lower() not in allowed})


def _where(html: str, words: list[str]) -> list[str]:
    """Each English word with a little of the text around it, for the failure message."""
    text = " ".join(visible_text(html).split())
    return [text[max(0, i - 30) : i + 30] for w in words[:8] if (i := text.find(w)) >= 0]


def _client(personas, who: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-Hans")
    if who != "anonymous":
        client.force_login(personas.owner if who == "owner" else personas.staff)
    return client


def test_every_page_is_chinese_in_zh_hans(personas, catalog, redis_client):
    pages = populate(personas, catalog)
    names = {o.model.name.lower() for o in catalog} | {o.provider.name.lower() for o in catalog}
    allowed = ALLOWED | {w.lower() for name in names for w in name.split()}
    untranslated = {}
    for page in pages:
        response = _client(personas, page.who).get(page.url)
        assert response.status_code == page.status, page.url
        assert 'lang="zh-hans"' in response.content.decode(), page.url
        found = english_words(response.content.decode(), allowed)
        if found:
            untranslated[page.name] = _where(response.content.decode(), found)
    assert not untranslated, f"English left on zh-Hans pages: {untranslated}"


def test_the_checker_sees_english():
    assert english_words(
        "<p>需要更多数据 <span title='needs more data'>x</span></p><script>var hello</script>", ALLOWED
    ) == [
        "data",
        "more",
        "needs",
    ]
