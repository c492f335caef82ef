from __future__ import annotations

from io import StringIO

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command

from credentials.crypto import decrypt_secret
from credentials.models import ProviderCredential
from tests.factories import ProviderFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/tenants/acme/credentials/"
SECRET = "sk-live-very-secret-9876"


@pytest.fixture
def provider():
    return ProviderFactory(slug="deepseek")


def test_secret_is_encrypted_and_never_returned(owner, provider, api_client_for, redis_client):
    client = api_client_for(owner)
    response = client.post(URL, {"provider": "deepseek", "secret": SECRET}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["last_four"] == "9876"
    stored = ProviderCredential.objects.get()
    assert SECRET not in stored.secret_token and decrypt_secret(stored.secret_token) == SECRET
    for body in (response.content, client.get(URL).content, client.get(f"{URL}{stored.pk}/").content):
        assert SECRET.encode() not in body and stored.secret_token.encode() not in body
    assert SECRET not in repr(stored) and SECRET not in str(stored)
    duplicate = client.post(URL, {"provider": "deepseek", "secret": SECRET}, format="json")
    assert duplicate.json()["error"]["code"] == "credential_exists"


@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/latest", "http://10.0.0.5/v1", "http://[fd00:ec2::254]/", "file:///etc/passwd"]
)
def test_unsafe_base_url_is_refused(owner, provider, api_client_for, url):
    response = api_client_for(owner).post(
        URL, {"provider": "deepseek", "secret": SECRET, "base_url": url}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "unsafe_url",
        "message": response.json()["error"]["message"],
        "param": "base_url",
    }
    assert not ProviderCredential.objects.exists()


def test_developer_may_list_but_not_add(developer, provider, api_client_for):
    client = api_client_for(developer)
    assert client.get(URL).status_code == 200
    assert client.post(URL, {"provider": "deepseek", "secret": SECRET}, format="json").status_code == 403


def test_rotate_credential_keys_reencrypts_with_the_newest_key(owner, provider, settings, redis_client):
    from credentials.services import credential_create

    old_key = settings.CREDENTIAL_KEYS[0]
    credential = credential_create(tenant=owner.tenant, provider=provider, secret=SECRET)
    new_key = Fernet.generate_key().decode()
    settings.CREDENTIAL_KEYS = [new_key, old_key]
    call_command("rotate_credential_keys", stdout=StringIO())
    credential.refresh_from_db()
    assert Fernet(new_key.encode()).decrypt(credential.secret_token.encode()).decode() == SECRET
    settings.CREDENTIAL_KEYS = [new_key]
    assert decrypt_secret(credential.secret_token) == SECRET
