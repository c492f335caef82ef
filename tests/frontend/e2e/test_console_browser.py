"""Console in a real browser: live balance and request log, key shown once, ops dashboard access."""

from __future__ import annotations

import time
import uuid

import pytest

from contracts.redis_keys import tenant_group
from contracts.usage import Prices, Tokens, UsageEvent
from tests.frontend.e2e.conftest import group_send, login_cookie, shot

pytestmark = pytest.mark.browser


def _as(page, user, live_url):
    page.context.add_cookies([login_cookie(user, live_url)])


def _usage_event(tenant_id: int, key_id: int, offering) -> UsageEvent:
    now = time.time()
    return UsageEvent(
        request_id=f"req_{uuid.uuid4().hex[:20]}",
        tenant_id=tenant_id,
        key_id=key_id,
        model="deepseek-v4-flash",
        offering_id=offering.pk,
        provider="deepseek",
        region="beijing",
        route_mode="balanced",
        route_reason="fastest ttft",
        tokens=Tokens(input_uncached=900, cache_read=100, output=250),
        usage_source="provider",
        prices=Prices(input=270_000, output=1_080_000, cache_read=27_000),
        cost_micros=513,
        charge_micros=513,
        status="ok",
        http_status=200,
        stream=True,
        started_at=now - 1.2,
        ttft_ms=310.0,
        total_ms=1200.0,
        finished_at=now,
    )


def test_balance_and_request_log_update_without_reload(page, live_url, personas, catalog):
    from apikeys.services import api_key_issue
    from metering.ingest import usage_ingest
    from metering.services import balance_topup

    balance_topup(tenant=personas.tenant, amount_micros=10_000_000, idempotency_key="test:topup", source="demo")
    key = api_key_issue(tenant=personas.tenant, created_by=personas.owner, name="app").api_key
    _as(page, personas.owner, live_url)
    page.goto("/console/acme/requests/")
    page.wait_for_selector("#tenant-live.live-on")
    assert page.is_visible("#requests-empty")

    event = _usage_event(personas.tenant.pk, key.pk, catalog[0])
    usage_ingest(events=[event])
    group_send(tenant_group(personas.tenant.pk), {"type": "billing.update", "balance_micros": 9_999_487})
    page.wait_for_selector(f"tr[data-request-id='{event.request_id}']", timeout=10_000)
    row = page.inner_text(f"tr[data-request-id='{event.request_id}']")
    assert "deepseek" in row and "fastest ttft" in row and "310 ms" in row
    shot(page, "console-requests")

    page.goto("/console/acme/")
    page.wait_for_selector("#tenant-live.live-on")
    before = page.inner_text("#balance")
    assert page.inner_text("#requests-30d") == "1"
    second = _usage_event(personas.tenant.pk, key.pk, catalog[0])
    usage_ingest(events=[second])
    group_send(tenant_group(personas.tenant.pk), {"type": "billing.update"})
    page.wait_for_function("(b) => document.getElementById('balance').textContent !== b", arg=before, timeout=10_000)
    # every overview counter and the latest requests follow, not only the balance
    page.wait_for_function("document.getElementById('requests-30d').textContent === '2'", timeout=10_000)
    page.wait_for_selector(f"#request-rows tr[data-request-id='{second.request_id}']", timeout=10_000)
    shot(page, "console-overview")


def test_create_key_shows_it_once_with_copy_button(page, live_url, personas, catalog):
    _as(page, personas.developer, live_url)
    page.goto("/console/acme/keys/")
    page.click("#key-form button[type=submit]")
    assert "This field is required." in page.inner_text("#err-name")  # specific, on the field
    page.fill("input[name=name]", "ci runner")
    page.fill("input[name=allowed_models]", "deepseek-v4-flash")
    page.fill("input[name=rpm_limit]", "60")
    page.click("#key-form button[type=submit]")
    secret = page.inner_text("#new-key-value")
    assert secret.startswith("tw_live_")
    assert page.is_visible("button[data-copy=new-key-value]")
    shot(page, "console-keys")
    page.reload()
    assert secret not in page.content()


def test_usage_playground_and_billing_pages_render(page, live_url, personas, catalog):
    _as(page, personas.owner, live_url)
    for path, name in (("usage", "console-usage"), ("playground", "console-playground"), ("billing", "console-billing"),
                       ("routing", "console-routing"), ("team", "console-team"), ("credentials", "console-credentials")):  # fmt: skip
        page.goto(f"/console/acme/{path}/")
        page.wait_for_selector("#tenant-live.live-on")
        shot(page, name)


def test_admin_sees_billing_dashboard_and_developer_does_not(page, live_url, personas, catalog):
    from apikeys.services import api_key_issue
    from metering.ingest import usage_ingest

    key = api_key_issue(tenant=personas.tenant, created_by=personas.owner, name="app").api_key
    usage_ingest(events=[_usage_event(personas.tenant.pk, key.pk, catalog[0]) for _ in range(3)])
    _as(page, personas.developer, live_url)
    response = page.goto("/ops/billing/")
    assert response.status == 404
    assert page.locator("a", has_text="Billing ops").count() == 0
    page.context.clear_cookies()
    _as(page, personas.staff, live_url)
    response = page.goto("/ops/billing/")
    assert response.status == 200
    assert page.is_visible("text=Billing latency p50")
    assert page.is_visible("text=Probe coverage per region")
    page.wait_for_function("window.twCharts && window.twCharts['chart-margin'] && window.twCharts['chart-model']")
    assert "acme" in page.inner_text("body")  # top tenants (by slug)
    shot(page, "ops-billing")
    page.context.add_cookies([{"name": "django_language", "value": "zh-hans", "url": live_url}])
    page.goto("/ops/billing/")
    page.wait_for_function("window.twCharts && window.twCharts['chart-margin']")
    labels = page.evaluate("window.twCharts['chart-margin'].data.datasets.map((d) => d.label)")
    assert labels[0] == "收费（美元）", labels
    shot(page, "ops-billing-zh")
