"""Inputs the chaos suite's fuzzer (tests/reliability/test_fuzz.py) answered with a 500, now a precise 400."""

from __future__ import annotations

import pytest
import requests

CASES = [
    ("/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": [{"role": {}, "content": ""}], "max_tokens": 1}),
    ("/v1/messages/count_tokens", {"model": "claude-haiku-4.5", "messages": [{"role": {}, "content": []}]}),
    ("/v1/messages", {"model": "claude-haiku-4.5", "max_tokens": 1, "messages": [{"role": ["user"], "content": "x"}]}),
]


@pytest.mark.parametrize(("path", "body"), CASES)
def test_a_role_that_is_not_a_string_is_a_400_naming_the_field(gateway, tenant, path, body):
    r = requests.post(gateway.base_url + path, json=body, headers={"x-api-key": tenant.key}, timeout=10)
    assert r.status_code == 400, r.text
    assert "messages[0].role" in r.json()["error"]["message"]
