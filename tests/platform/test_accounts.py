from __future__ import annotations

import re

import pytest
from django.core import mail

from accounts.models import User
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def test_signup_logs_in_with_email(client):
    response = client.post(
        "/accounts/signup/",
        {
            "email": "New@Example.test",
            "name": "New",
            "password1": "a-long-pass-phrase-7",
            "password2": "a-long-pass-phrase-7",
        },
    )
    assert response.status_code == 302
    assert User.objects.get().email == "new@example.test"
    assert client.get("/api/v1/tenants/").status_code == 200


def test_login_with_email_and_logout(client):
    user = UserFactory(email="dev@example.test")
    assert client.get("/accounts/login/").status_code == 200
    assert client.post("/accounts/login/", {"username": "dev@example.test", "password": PASSWORD}).status_code == 302
    assert int(client.session["_auth_user_id"]) == user.pk
    client.post("/accounts/logout/")
    assert "_auth_user_id" not in client.session


def test_password_reset_sends_a_working_link(client, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    user = UserFactory(email="forgot@example.test")
    assert client.post("/accounts/password/reset/", {"email": "forgot@example.test"}).status_code == 302
    link = re.search(r"http://testserver(\S+)", mail.outbox[0].body).group(1)
    form_url = client.get(link).url
    new = "brand-new-pass-phrase-5"
    assert client.post(form_url, {"new_password1": new, "new_password2": new}).status_code == 302
    user.refresh_from_db()
    assert user.check_password(new)


def test_password_change(client):
    user = UserFactory()
    client.force_login(user)
    new = "another-long-phrase-3"
    response = client.post(
        "/accounts/password/change/", {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password(new)
