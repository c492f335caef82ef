"""The console adds up: billing's counters equal the overview, the request log and the ledger; the log's
filters live in the URL and in the CSV; the model asked for shows beside the one served; refunded and
disputed top-ups never read "Succeeded"; a re-invite says what became of the role; the navigation offers
only pages the role may open."""

from __future__ import annotations

import csv
import io
import re
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from metering.ingest import usage_ingest
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, Balance, PaymentReversal, TopUp
from metering.services import balance_topup, tenant_available_ensure
from tenants.models import Invitation, Membership, Role
from tests.factories import issue_key
from tests.frontend.conftest import make_user
from tests.frontend.test_request_log import _rejected
from tests.metering.conftest import make_event

pytestmark = pytest.mark.django_db


def _client(user, language: str | None = None) -> Client:
    client = Client()
    client.force_login(user)
    if language:
        client.cookies["django_language"] = language
    return client


def _stat(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>([^<]*)<', html)
    assert found, f"#{element_id} not on the page"
    return found.group(1).strip()


def _csv(response) -> list[dict[str, str]]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.fixture
def traffic(personas, redis_client):
    """Two keys, two models, served and rejected calls, one of them an hour and a half old."""
    tenant_available_ensure(tenant=personas.tenant)
    balance_topup(tenant=personas.tenant, amount_micros=20_000_000, idempotency_key="topup:pi_t", source="stripe")
    bot, _ = issue_key(personas.tenant, name="ci-bot")
    app, _ = issue_key(personas.tenant, name="web-app")
    now = time.time()
    events = [
        make_event(personas.tenant.pk, bot.pk, request_id="gen-a", finished_at=now - 60),
        make_event(personas.tenant.pk, bot.pk, request_id="gen-b", finished_at=now - 5400, model="glm-5.1"),
        make_event(
            personas.tenant.pk,
            app.pk,
            request_id="gen-c",
            finished_at=now - 30,
            route_reason="family:gpt-9-imaginary->deepseek-v4-flash; cheapest healthy",
        ),
        _rejected(personas.tenant.pk, app.pk, request_id="gen-r", finished_at=now - 20),
    ]
    usage_ingest(events=events)
    return {"bot": bot, "app": app}


def test_billing_counts_what_the_overview_the_request_log_and_the_ledger_count(personas, traffic):
    owner = _client(personas.owner)
    billing = owner.get("/console/acme/billing/").content.decode()
    overview = owner.get("/console/acme/").content.decode()
    assert _stat(billing, "requests-30d") == _stat(overview, "requests-30d") == "3"  # served; the refusal is not usage
    log = owner.get("/console/acme/requests/", {"range": "30d"}).context["rows"]
    assert len([r for r in log if r["status"] != "rejected"]) == 3 and len(log) == 4
    spent = sum(r["charge_micros"] for r in log)
    ledger_spent = Balance.objects.get(account__tenant=personas.tenant, account__kind=AccountKind.SPENT).amount_micros
    assert spent == ledger_spent > 0
    assert _stat(billing, "month-spend") == _stat(overview, "month-spend")
    assert tenant_account_balance(tenant_id=personas.tenant.pk) == 20_000_000 - ledger_spent


def test_request_log_filters_are_in_the_url_and_in_the_csv(personas, traffic):
    owner = _client(personas.owner)
    app = traffic["app"]
    page = owner.get("/console/acme/requests/", {"key": app.pk, "status": "ok", "range": "1h"})
    assert [r["id"] for r in page.context["rows"]] == ["gen-c"]
    html = page.content.decode()
    query = f"key={app.pk}&amp;status=ok&amp;range=1h"
    assert f'id="requests-csv" href="?format=csv&amp;{query}"' in html
    assert f'data-fragment-url="?fragment=1&amp;{query}"' in html
    assert f'<option value="{app.pk}" selected>' in html and '<option value="1h" selected>' in html
    rows = _csv(owner.get("/console/acme/requests/", {"format": "csv", "key": app.pk, "status": "ok", "range": "1h"}))
    assert [r["id"] for r in rows] == ["gen-c"] and rows[0]["requested_model"] == "gpt-9-imaginary"
    by_model = owner.get("/console/acme/requests/", {"model": "glm-5.1"}).context["rows"]
    assert [r["id"] for r in by_model] == ["gen-b"]
    assert [
        r["id"] for r in owner.get("/console/acme/requests/", {"range": "1h", "model": "glm-5.1"}).context["rows"]
    ] == []
    today = timezone.localdate()
    dated = owner.get("/console/acme/requests/", {"since": (today - timedelta(days=1)).isoformat(), "until": today})
    assert len(dated.context["rows"]) == 4
    rejected = _csv(owner.get("/console/acme/requests/", {"format": "csv", "status": "rejected"}))
    assert [r["id"] for r in rejected] == ["gen-r"]


def test_a_filter_naming_another_tenants_key_or_junk_shows_the_whole_log(personas, traffic):
    foreign, _ = issue_key(personas.other_tenant, name="theirs")
    owner = _client(personas.owner)
    for junk in ({"key": foreign.pk}, {"status": "bogus"}, {"since": "yesterday"}, {"range": "9y"}):
        response = owner.get("/console/acme/requests/", junk)
        assert response.status_code == 200 and len(response.context["rows"]) == 4, junk


def test_the_model_asked_for_is_shown_beside_the_one_served(personas, traffic):
    owner = _client(personas.owner)
    html = owner.get("/console/acme/requests/").content.decode()
    assert 'data-requested="gpt-9-imaginary"' in html and "asked for" in html
    assert html.count("requested-model") == 1  # only where the names differ
    detail = owner.get("/console/acme/requests/gen-c/").content.decode()
    assert "gpt-9-imaginary" in _stat_block(detail, "requested-model")


def _stat_block(html: str, element_id: str) -> str:
    start = html.index(f'id="{element_id}"')
    return html[start : html.index("</dd>", start)]


@pytest.mark.parametrize(
    ("reversals", "state", "shown"),
    [
        ([("refund", "re_full", 20_000_000, "succeeded")], "refunded", "Refunded"),
        ([("refund", "re_part", 5_000_000, "succeeded")], "partly_refunded", "Partly refunded ($5.0000)"),
        ([("refund", "re_failed", 20_000_000, "failed")], "succeeded", "Succeeded"),
        ([("dispute", "dp_open", 20_000_000, "needs_response")], "disputed", "Disputed"),
        ([("dispute", "dp_lost", 20_000_000, "lost")], "dispute_lost", "Dispute lost"),
        ([("dispute", "dp_won", 20_000_000, "won")], "dispute_won", "Succeeded (dispute won)"),
    ],
)
def test_refunded_and_disputed_top_ups_say_so(personas, reversals, state, shown):
    topup = TopUp.objects.create(
        tenant=personas.tenant, amount_micros=20_000_000, payment_intent_id="pi_rev", status="succeeded"
    )
    for kind, stripe_id, amount, status in reversals:
        PaymentReversal.objects.create(
            stripe_id=stripe_id,
            kind=kind,
            tenant=personas.tenant,
            payment_intent_id="pi_rev",
            amount_micros=amount,
            status=status,
        )
    html = _client(personas.owner).get("/console/acme/billing/").content.decode()
    cell = html[html.index(f'data-topup-status="{topup.pk}"') :]
    cell = cell[: cell.index("</td>")]
    assert f'data-state="{state}"' in cell and shown in cell
    if state != "succeeded" and state != "dispute_won":
        assert "Succeeded" not in cell


def test_refund_state_reads_in_chinese(personas):
    TopUp.objects.create(
        tenant=personas.tenant, amount_micros=20_000_000, payment_intent_id="pi_zh", status="succeeded"
    )
    PaymentReversal.objects.create(
        stripe_id="re_zh",
        kind="refund",
        tenant=personas.tenant,
        payment_intent_id="pi_zh",
        amount_micros=20_000_000,
        status="succeeded",
    )
    html = _client(personas.owner, "zh-hans").get("/console/acme/billing/").content.decode()
    assert "已退款" in html and "Refunded" not in html


def test_reinviting_with_another_role_changes_it_and_says_so(personas):
    owner = _client(personas.owner)
    owner.post("/console/acme/team/", {"email": "new@example.test", "role": "viewer"})
    html = owner.post("/console/acme/team/", {"email": "new@example.test", "role": "admin"}).content.decode()
    assert Invitation.objects.get(email="new@example.test").role == Role.ADMIN
    assert "with the role Admin (was Viewer)" in html
    same = owner.post("/console/acme/team/", {"email": "new@example.test", "role": "admin"}).content.decode()
    assert "Invitation sent again to new@example.test;" in same and "(was" not in same


def test_inviting_a_member_with_another_role_says_the_role_did_not_change(personas):
    html = _client(personas.owner).post("/console/acme/team/", {"email": "dev@acme.test", "role": "admin"})
    text = html.content.decode()
    assert "already a member with the role Developer; an invitation does not change it" in text
    assert Membership.objects.get(user=personas.developer).role == Role.DEVELOPER
    assert not Invitation.objects.exists()


@pytest.mark.parametrize(
    ("role", "offered", "hidden"),
    [
        (Role.VIEWER, ["requests", "usage", "team", "keys"], ["billing", "credentials"]),
        (Role.BILLING, ["billing", "usage"], ["keys", "credentials"]),
        (Role.DEVELOPER, ["keys", "credentials"], ["billing"]),
        (Role.OWNER, ["keys", "billing", "credentials", "team"], []),
    ],
)
def test_navigation_offers_only_pages_the_role_may_open(personas, role, offered, hidden):
    user = make_user(f"{role}-nav@acme.test")
    Membership.objects.create(tenant=personas.tenant, user=user, role=role)
    client = _client(user)
    html = client.get("/console/acme/").content.decode()
    start = html.index('class="sidenav"')
    nav = html[start : html.index("</nav>", start)]
    links = re.findall(r'href="/console/acme/([a-z]*)/?"', nav)
    for page in offered:
        assert page in links, (role, page)
        assert client.get(f"/console/acme/{page}/").status_code == 200
    for page in hidden:
        assert page not in links, (role, page)
        assert client.get(f"/console/acme/{page}/").status_code == 403
    for page in links:  # nothing offered answers 403
        assert client.get(f"/console/acme/{page}/" if page else "/console/acme/").status_code == 200, (role, page)
