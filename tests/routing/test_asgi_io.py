"""Request headers kept with a call: the ones the gateway reads, not every SDK header for a stream's life."""

from __future__ import annotations

from routing.handlers.intake import api_key_from
from routing.http.asgi_io import READ_HEADERS, header_map

SDK_HEADERS = [
    (b"host", b"127.0.0.1:8001"),
    (b"user-agent", b"Anthropic/Python 0.69.0"),
    (b"x-stainless-lang", b"python"),
    (b"x-stainless-retry-count", b"0"),
    (b"x-api-key", b"tw-secret"),
    (b"anthropic-version", b"2023-06-01"),
    (b"anthropic-beta", b"claude-code-20250219"),
    (b"x-tokenway-route", b"cost"),
    (b"content-type", b"application/json"),
]


def test_only_the_headers_the_gateway_reads_are_kept():
    headers = header_map({"headers": SDK_HEADERS})
    assert headers == {
        "x-api-key": "tw-secret",
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "claude-code-20250219",
        "x-tokenway-route": "cost",
    }
    assert api_key_from(headers) == "tw-secret"


def test_bearer_key_and_latin1_values_survive():
    headers = header_map({"headers": [(b"authorization", b"Bearer tw-k\xe9y"), (b"x-stainless-os", b"Linux")]})
    assert headers == {"authorization": "Bearer tw-k\u00e9y"}
    assert {name.decode() for name in READ_HEADERS} >= set(headers)
