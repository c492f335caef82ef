"""The token_overreport fault (docs/sim.md): the answer as usual, its usage and bill inflated by the rule's factor."""

from __future__ import annotations

import math

from tests.sim.conftest import inject

BODY = {"model": "gpt-4.1-mini", "max_tokens": 20, "messages": [{"role": "user", "content": "Tell me a story."}]}
URL = "/openai/v1/chat/completions"


def _last(http) -> dict:
    return http.get("/_sim/requests?provider=openai&limit=1").json()["requests"][0]["sim"]


def test_an_overreporting_answer_reports_and_bills_its_usage_times_the_factor(http):
    inject(http, provider="openai", kind="token_overreport", factor=1.5, count=1)

    inflated = http.post(URL, json=BODY).json()

    entry = _last(http)
    true, reported = entry["true_usage"], entry["reported_usage"]
    assert entry["fault"] == "token_overreport" and true["output"] <= 20  # the answer kept its max_tokens
    assert inflated["usage"]["completion_tokens"] == reported["output"] == math.ceil(true["output"] * 1.5) > 20
    assert entry["billed_cost_micros"] > entry["published_cost_micros"]  # billed on the inflated count
    honest = http.post(URL, json=BODY).json()  # count=1: the next answer is honest
    assert honest["usage"]["completion_tokens"] == _last(http)["true_usage"]["output"]


def test_the_default_factor_is_the_dishonest_resellers_fifteen_percent(http):
    inject(http, provider="openai", kind="token_overreport")
    assert http.get("/_sim/faults").json()["faults"][0]["factor"] is None
    usage = http.post(URL, json=BODY).json()["usage"]
    assert usage["completion_tokens"] == math.ceil(_last(http)["true_usage"]["output"] * 1.15)
