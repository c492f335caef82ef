"""An invitation in a real browser: the owner invites from the team page, the invitee opens the
emailed link signed out, signs up with the invited address and lands in the console as a member."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from accounts.models import User
from tenants.models import Membership
from tests.frontend.conftest import PASSWORD
from tests.frontend.e2e.conftest import login_cookie, shot

pytestmark = pytest.mark.browser


def test_owner_invites_and_a_new_user_signs_up_through_the_emailed_link(browser, page, live_url, personas):
    page.context.add_cookies([login_cookie(personas.owner, live_url)])
    page.goto("/console/acme/team/")
    page.fill("input[name=email]", "newhire@acme.test")
    page.select_option("select[name=role]", "developer")
    page.click("form[novalidate] button[type=submit]")
    page.wait_for_selector("#invite-link")
    assert "Invitation emailed to newhire@acme.test" in page.inner_text(".messages")
    (link,) = re.findall(r"https?://\S+/accounts/invitations/[\w-]+/", str(mail.outbox[-1].body))
    assert link == page.inner_text("#invite-link") and link.startswith(live_url)

    invitee = browser.new_context(base_url=live_url, locale="en-US").new_page()  # signed out, own cookies
    errors: list[str] = []
    invitee.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        invitee.goto(link)
        assert invitee.get_attribute("#invitation", "data-state") == "signup"
        assert invitee.input_value("input[name=email]") == "newhire@acme.test"
        invitee.fill("input[name=name]", "New Hire")
        invitee.fill("input[name=password1]", PASSWORD)
        invitee.fill("input[name=password2]", PASSWORD)
        invitee.click("#invitation-signup")
        invitee.wait_for_url("**/console/acme/")
        assert "You joined as Developer" in invitee.inner_text(".messages")
        shot(invitee, "invitation-joined")
        assert not errors, f"JavaScript errors on the invitee's pages: {errors}"
    finally:
        invitee.context.close()
    assert Membership.objects.get(user=User.objects.get(email="newhire@acme.test")).role == "developer"
