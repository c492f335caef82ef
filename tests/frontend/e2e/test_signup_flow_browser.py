"""The whole product in one browser session: sign up, create a tenant, top up through Stripe, create a key,
chat in the playground, and watch the request log and the balance update without reloading.

Everything runs for real on loopback: the ASGI app (Django + gateway + websockets) under uvicorn,
the simulated provider fleet with demo/catalog.yaml published to the gateway, localstripe with its
signed webhook, and the metering consumer draining the usage stream.
"""

from __future__ import annotations

import pytest

from metering.models import TopUp, TopUpStatus, UsageRecord
from tenants.models import Tenant
from tests.frontend.conftest import PASSWORD
from tests.frontend.e2e.conftest import shot

pytestmark = pytest.mark.browser
LIVE_TIMEOUT_MS = 15_000  # websocket push after the consumer's commit is well under a second; slack for CI


def _sign_up(page) -> None:
    page.goto("/accounts/signup/")
    page.fill("input[name=email]", "new@dev.test")
    page.fill("input[type=password] >> nth=0", PASSWORD)
    if page.locator("input[type=password]").count() > 1:
        page.fill("input[type=password] >> nth=1", PASSWORD)
    page.click("form button[type=submit]")
    page.wait_for_load_state()


def _create_tenant(page) -> None:
    page.goto("/console/new/")
    page.fill("input[name=name]", "Newco")
    page.fill("input[name=slug]", "newco")
    page.click("form.card button[type=submit]")
    page.wait_for_url("**/console/newco/")


def _top_up(page) -> None:
    page.goto("/console/newco/billing/")
    page.wait_for_selector("#tenant-live.live-on")
    assert page.inner_text("#balance") == "$0.000000"
    page.fill("input[name=amount]", "20")
    page.click("#topup-submit")
    page.wait_for_selector("#topup-progress")  # progress card; Stripe's webhook arrives asynchronously
    page.wait_for_selector("#topup-progress[data-status=succeeded]", timeout=LIVE_TIMEOUT_MS)
    page.wait_for_function("document.getElementById('balance').textContent === '$20.000000'", timeout=LIVE_TIMEOUT_MS)
    shot(page, "console-billing-topup")


def _chat(page) -> str:
    page.goto("/console/newco/playground/")
    page.click("#pg-newkey")
    page.wait_for_function("document.getElementById('pg-key').value.startsWith('tw_')")
    page.select_option("#pg-model", "deepseek-v3.2")
    page.click("#pg-send")
    page.wait_for_function("document.getElementById('playground').dataset.done === '1'", timeout=30_000)
    assert not page.locator("#pg-chat .msg.error").count(), page.inner_text("#pg-chat")
    shot(page, "playground-answer")
    return page.inner_text("#pg-rid")


def test_signup_topup_playground_then_live_request_log_and_balance(
    page, live_url, sim_fleet, demo_catalog, stripe_offline, usage_consumer
):
    _sign_up(page)
    _create_tenant(page)
    _top_up(page)
    tenant = Tenant.objects.get(slug="newco")
    assert TopUp.objects.get(tenant=tenant).status == TopUpStatus.SUCCEEDED

    log = page.context.new_page()  # the request log and the overview stay open, never reloaded
    log.goto("/console/newco/requests/")
    log.wait_for_selector("#tenant-live.live-on")
    assert log.is_visible("#requests-empty")
    overview = page.context.new_page()
    overview.goto("/console/newco/")
    overview.wait_for_selector("#tenant-live.live-on")
    assert overview.inner_text("#balance") == "$20.000000"

    request_id = _chat(page)
    assert request_id.startswith("req_") or request_id not in ("", "—")
    log.wait_for_selector(f"tr[data-request-id='{request_id}']", timeout=LIVE_TIMEOUT_MS)
    assert "deepseek-v3.2" in log.inner_text(f"tr[data-request-id='{request_id}']")
    overview.wait_for_function(
        "document.getElementById('balance').textContent !== '$20.000000'", timeout=LIVE_TIMEOUT_MS
    )
    record = UsageRecord.objects.get(request_id=request_id)
    assert record.tenant_id == tenant.pk and record.charge_micros > 0
    assert log.evaluate("performance.getEntriesByType('navigation').length") == 1  # not reloaded
    shot(log, "console-requests-live")
    shot(overview, "console-overview-live")
