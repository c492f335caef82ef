"""The provider URL table at save time, through the credentials API under the production policy
(no loopback, ports 80 and 443): every refused spelling is a 400 naming ``base_url`` that stores
nothing and publishes nothing, on create and on update; every public one is saved as sent.
(One test walks the whole table: a request each, one database setup.)"""

from __future__ import annotations

import pytest

from credentials.models import ProviderCredential
from outbox.models import OutboxRow
from tests.contracts import url_spellings as table
from tests.factories import ProviderFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/tenants/acme/credentials/"
SECRET = "sk-live-very-secret-9876"
SAVED = "https://8.8.8.8/v1"
# The spellings, accepted before the policy judged what an address reaches.
REPORTED = ["http://[64:ff9b::a9fe:a9fe]/v1", "http://[64:ff9b::a00:1]/v1", "http://[2002:7f00:1::]/v1",
            "http://[::127.0.0.1]/v1", "http://192.0.0.192/v1", "https://8.8.8.8:8443/"]  # fmt: skip


@pytest.fixture(autouse=True)
def production_policy(settings):
    settings.ALLOW_LOOPBACK_PROVIDER_URLS = False
    settings.BYOK_ALLOWED_PORTS = table.PRODUCTION_PORTS


@pytest.fixture
def client(owner, api_client_for):
    ProviderFactory(slug="deepseek")
    return api_client_for(owner)


def _create(client, base_url: str):
    return client.post(URL, {"provider": "deepseek", "secret": SECRET, "base_url": base_url}, format="json")


def _refused_as_base_url(response) -> bool:
    if response.status_code != 400:
        return False
    error = response.json()["error"]
    return error["param"] == "base_url" and (error["code"] == "unsafe_url" or error["code"].startswith("invalid"))


def test_every_refused_spelling_is_a_400_that_saves_and_publishes_nothing(client):
    assert set(REPORTED) <= set(table.REFUSED)
    outbox = OutboxRow.objects.count()
    saved = [url for url in table.REFUSED if not _refused_as_base_url(_create(client, url))]
    assert saved == []
    assert not ProviderCredential.objects.exists()
    assert OutboxRow.objects.count() == outbox


def test_every_refused_spelling_leaves_a_saved_url_in_place(client):
    credential = _create(client, SAVED).json()
    outbox = OutboxRow.objects.count()
    replaced = [
        url
        for url in table.REFUSED
        if not _refused_as_base_url(client.patch(f"{URL}{credential['id']}/", {"base_url": url}, format="json"))
    ]
    assert replaced == []
    assert ProviderCredential.objects.get().base_url == SAVED
    assert OutboxRow.objects.count() == outbox


def test_every_public_address_spelled_plainly_is_saved_as_sent(client):
    for url in table.ACCEPTED:
        response = _create(client, url)
        assert response.status_code == 201, (url, response.content)
        assert ProviderCredential.objects.get().base_url == url
        assert client.delete(f"{URL}{response.json()['id']}/").status_code == 204
