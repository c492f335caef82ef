"""Integrity before traffic and the least-bad candidate under overload (routing.router.candidates):
an offering whose integrity probes have not run is not routed to while its model has a checked one,
is served (and named in a header) when it is all the model has and the caller allows fallbacks; when
every candidate cools down after failures the one whose cooldown ends first is tried, while a
provider's stated rate limit is still honoured."""

from __future__ import annotations

import dataclasses

import requests

from contracts.keyrecord import KeyRecord
from contracts.snapshot import CatalogSnapshot, OfferingSnapshot
from contracts.usage import Prices
from routing.failover.health import HealthBoard
from routing.router.candidates import Need, filtered
from routing.router.prefs import ProviderPrefs
from tests.catalogs import sim_catalog
from tests.routing.conftest import _wait_catalog
from tests.routing.harness import publish_catalog
from tests.waiting import ManualClock

RECORD = KeyRecord(key_id=1, tenant_id=1, tenant_slug="t", name="k", prefix="p")
NEED = Need(input_estimate=500, max_tokens=100, params=frozenset())
NO_FALLBACKS = ProviderPrefs(allow_fallbacks=False)


def offering(oid: int, provider: str, *, pending: bool = False) -> OfferingSnapshot:
    prices = Prices(input=1_000_000, output=2_000_000)
    return OfferingSnapshot(
        oid, "m", provider, "u", "openai", "http://x", "openai", True, prices, 100_000, 8000, integrity_pending=pending
    )


def providers(pool: list[OfferingSnapshot]) -> list[str]:
    return [o.provider for o in pool]


def test_an_unchecked_offering_waits_for_its_integrity_probes_while_the_model_has_a_checked_one():
    health = HealthBoard(failures_to_open=1, cooldown_s=10.0)
    offerings = (offering(1, "new", pending=True), offering(2, "old"))
    pool, why, dropped = filtered(offerings, RECORD, NEED, ProviderPrefs(), health)
    assert (providers(pool), why) == (["old"], None)
    assert [(o.provider, reason) for o, reason in dropped] == [("new", "integrity_pending")]
    probed = (dataclasses.replace(offerings[0], integrity_pending=False), offerings[1])
    assert providers(filtered(probed, RECORD, NEED, ProviderPrefs(), health)[0]) == ["new", "old"]


def test_a_model_with_only_unchecked_offerings_is_served_when_the_caller_allows_fallbacks():
    health = HealthBoard(failures_to_open=1, cooldown_s=10.0)
    only = (offering(1, "new", pending=True),)
    assert providers(filtered(only, RECORD, NEED, ProviderPrefs(), health)[0]) == ["new"]
    assert filtered(only, RECORD, NEED, NO_FALLBACKS, health)[:2] == ([], "integrity_pending")


def test_the_snapshot_carries_the_flag_and_older_documents_read_as_checked():
    catalog = CatalogSnapshot(version=1, generated_at=0.0, offerings=(offering(1, "new", pending=True),))
    assert CatalogSnapshot.from_json(catalog.to_json()).offerings[0].integrity_pending
    older = catalog.to_json().replace(b',"integrity_pending":true', b"")
    assert b"integrity_pending" not in older
    assert not CatalogSnapshot.from_json(older).offerings[0].integrity_pending


def test_all_cooling_down_after_failures_tries_the_one_whose_cooldown_ends_first():
    clock = ManualClock()
    health = HealthBoard(failures_to_open=1, cooldown_s=10.0, clock=clock)
    offerings = (offering(1, "a"), offering(2, "b"))
    health.failure(2)
    clock.advance(3.0)
    health.failure(1)  # a cools down until 13 s, b until 10 s
    pool, why, dropped = filtered(offerings, RECORD, NEED, ProviderPrefs(), health)
    assert (providers(pool), why) == (["b"], None)
    assert [(o.provider, reason) for o, reason in dropped] == [("a", "cooling_down")]
    assert filtered(offerings, RECORD, NEED, NO_FALLBACKS, health)[:2] == ([], "all_cooling_down")


def test_a_providers_stated_rate_limit_is_still_honoured():
    health = HealthBoard(failures_to_open=1, cooldown_s=10.0, clock=ManualClock())
    offerings = (offering(1, "a"), offering(2, "b"))
    for oid in (1, 2):
        health.failure(oid, retry_after=5.0, throttled=True)
    assert filtered(offerings, RECORD, NEED, ProviderPrefs(), health)[:2] == ([], "all_cooling_down")


def _publish_pending(gateway, redis_client, sim, pending: set[tuple[str, str]]) -> None:
    catalog = sim_catalog(sim.provider_url)
    offerings = tuple(
        dataclasses.replace(o, integrity_pending=(o.model, o.provider) in pending) for o in catalog.offerings
    )
    catalog = dataclasses.replace(catalog, offerings=offerings)
    publish_catalog(redis_client, catalog)
    _wait_catalog(gateway, catalog)


def _chat(gateway, tenant, model: str, **body: dict[str, bool]) -> requests.Response:
    response = requests.post(
        f"{gateway.base_url}/v1/chat/completions",
        json={"model": model, "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8, **body},
        headers={"authorization": f"Bearer {tenant.key}", "x-tokenway-route": "performance"},
        timeout=20,
    )
    return response


def test_through_the_gateway_unchecked_offerings_wait_and_a_models_only_one_is_served_with_a_header(
    gateway, tenant, redis_client, sim
):
    checked = ("deepseek-v3.2", "volcengine")
    others = {(o.model, o.provider) for o in gateway.gateway.catalog.by_model["deepseek-v3.2"]} - {checked}
    _publish_pending(gateway, redis_client, sim, others | {("glm-5.1", "zhipu")})
    for _ in range(4):  # every other DeepSeek offering is new: only the checked one is routable
        response = _chat(gateway, tenant, "deepseek-v3.2")
        assert response.status_code == 200, response.text
        assert response.headers["x-tokenway-provider"] == "volcengine"
        assert "x-tokenway-integrity" not in response.headers
    only = _chat(gateway, tenant, "glm-5.1")  # its only offering, not probed yet: served, and said so
    assert only.status_code == 200, only.text
    assert only.headers["x-tokenway-integrity"] == "unverified"
    refused = _chat(gateway, tenant, "glm-5.1", provider={"allow_fallbacks": False})
    assert refused.status_code == 400
    assert "integrity_pending" in refused.text
