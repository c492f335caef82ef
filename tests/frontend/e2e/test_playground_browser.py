"""Playground in a real browser against the gateway and the simulated fleet: route mode, temperature,
max tokens and a system prompt reach the request; bad parameters are refused before sending; each answer
shows its tokens and the tenant's charge from the billed record."""

from __future__ import annotations

import pytest

from metering.models import UsageRecord
from tests.frontend.e2e.conftest import login_cookie, shot
from tests.waiting import wait_until

pytestmark = pytest.mark.browser


def test_playground_parameters_and_cost_per_message(
    browser, live_url, personas, demo_catalog, usage_consumer, redis_client
):
    from metering.services import demo_credit_ensure

    demo_credit_ensure(personas.tenant)
    context = browser.new_context(base_url=live_url, viewport={"width": 1280, "height": 900})
    context.add_cookies([login_cookie(personas.owner, live_url)])
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto("/console/acme/playground/")
    page.click("#pg-newkey")
    page.wait_for_function("document.getElementById('pg-key').value.startsWith('tw_')")
    page.select_option("#pg-model", "deepseek-v3.2")

    page.fill("#pg-temperature", "5")
    page.click("#pg-send")
    assert page.is_visible("#pg-param-error") and "0" in page.inner_text("#pg-param-error")
    assert page.locator("#pg-chat .msg").count() == 0  # nothing sent

    page.fill("#pg-temperature", "0.3")
    page.fill("#pg-max-tokens", "64")
    page.fill("#pg-system", "Answer in one short sentence.")
    page.select_option("#pg-mode", "cost")
    with page.expect_request("**/v1/chat/completions") as sent:
        page.click("#pg-send")
    body = sent.value.post_data_json
    assert body["messages"][0] == {"role": "system", "content": "Answer in one short sentence."}
    assert body["temperature"] == 0.3 and body["max_tokens"] == 64 and body["stream"] is True
    assert sent.value.headers["x-tokenway-route"] == "cost"
    page.wait_for_function("document.getElementById('playground').dataset.costs === '1'", timeout=30_000)
    assert not page.locator("#pg-chat .msg.error").count(), page.inner_text("#pg-chat")
    request_id = page.inner_text("#pg-rid")
    record = wait_until(  # the answer's facts may come from the usage stream before the ledger has the row
        lambda: UsageRecord.objects.filter(request_id=request_id).first(), timeout=20, message="usage ingested"
    )
    assert record.charge_micros > 0
    facts = page.inner_text(".msg-facts")
    assert (
        f"{record.charge_micros / 1_000_000:.6f}" in facts
        and f"{record.charge_micros / 1_000_000:.6f}" in page.inner_text("#pg-cost")
    )
    shot(page, "playground-parameters-cost")
    assert not errors, errors
    context.close()
