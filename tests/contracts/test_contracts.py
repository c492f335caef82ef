"""The shapes every side relies on. A rename or a changed rounding rule fails here first."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from contracts import apikey_format, pricing, tokens
from contracts.keyrecord import KeyRecord, Limits, RoutingPrefs
from contracts.route_explain import RouteCandidate
from contracts.snapshot import CatalogSnapshot, OfferingSnapshot, OfferingStats, StatsSnapshot
from contracts.usage import (
    CHARGED_END_STATES,
    END_STATES,
    USAGE_EVENT_VERSION,
    USAGE_SOURCES,
    USAGE_STATUSES,
    Prices,
    Tokens,
    UsageEvent,
    cost_micros,
)

USAGE_FIELDS = {
    "request_id", "tenant_id", "key_id", "model", "offering_id", "provider", "region", "route_mode",
    "route_reason", "tokens", "usage_source", "prices", "cost_micros", "charge_micros", "status",
    "http_status", "stream", "byok", "dialect_in", "started_at", "ttft_ms", "total_ms", "attempts",
    "hold_id", "hold_micros", "cache_fingerprint", "flags", "finished_at", "error_code", "route_candidates",
    "provider_cost_micros", "end_state", "finish_reason", "upstream_id", "traceparent", "output_clamped_tokens", "version",
}  # fmt: skip
ROUTE_CANDIDATE_FIELDS = {"provider", "offering_id", "verdict", "score", "parts", "flags"}
STATS_FIELDS = {
    "offering_id", "n", "ttft_p50_ms", "ttft_p90_ms", "tps_p50", "availability", "error_rate", "cache_hit_ratio",
    "effective_input_price", "quality_score", "flags", "ttft_p50_hi_ms", "ttft_10k_p50_ms", "tps_p10",
    "availability_lo", "error_rate_hi", "cache_hit_lo", "cache_n", "price_n", "overcount_factor", "billed_ratio",
    "quality_n", "quality_lo", "incidents", "answer_ttft_p50_ms", "recent_n", "recent_ttft_p50_ms", "recent_tps_p50",
    "recent_error_rate",
}  # fmt: skip
TOKEN_FIELDS = {"input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning"}


def _event(**overrides: Any) -> UsageEvent:
    fields: dict[str, Any] = {
        "request_id": "gen-1", "tenant_id": 7, "key_id": 3, "model": "deepseek-v3.2", "offering_id": 11,
        "provider": "deepseek", "region": "beijing", "route_mode": "cost", "route_reason": "cost:price",
        "tokens": Tokens(input_uncached=1000, cache_read=4000, output=250, reasoning=50),
        "usage_source": "provider", "prices": Prices(input=280_000, output=420_000, cache_read=28_000, version=2),
        "cost_micros": 500, "charge_micros": 550, "status": "ok", "http_status": 200, "stream": True,
        "flags": ("clamped_cache_read",),
    }  # fmt: skip
    fields.update(overrides)
    return UsageEvent(**fields)


def test_usage_event_wire_fields_are_pinned_and_round_trip():
    event = _event()
    data = orjson.loads(event.to_json())
    assert set(data) == USAGE_FIELDS
    assert set(data["tokens"]) == TOKEN_FIELDS
    assert UsageEvent.from_json(event.to_json()) == event


def test_usage_statuses_are_pinned_and_rejected_calls_carry_their_error_code():
    assert USAGE_STATUSES == ("ok", "upstream_error", "client_cancelled", "failed", "rejected")
    rejected = _event(
        status="rejected",
        http_status=402,
        error_code="insufficient_balance",
        tokens=Tokens(),
        offering_id=None,
        provider=None,
        prices=None,
        cost_micros=0,
        charge_micros=0,
    )
    assert UsageEvent.from_json(rejected.to_json()) == rejected
    assert orjson.loads(rejected.to_json())["error_code"] == "insufficient_balance"


def test_end_states_are_pinned_and_only_a_delivered_or_abandoned_answer_is_charged():
    assert END_STATES == (
        "completed", "client_cancelled", "client_gone_before_answer", "client_gone_in_admission", "upstream_cut",
        "upstream_timeout", "upstream_error", "gateway_error", "rejected", "hedge_cancelled", "hold_exhausted", "",
    )  # fmt: skip
    # "": an event from before them; hold_exhausted: ended at its output allowance, charged within its hold
    assert sorted(CHARGED_END_STATES) == ["", "client_cancelled", "completed", "hold_exhausted"]
    old = orjson.loads(_event().to_json())
    for name in ("end_state", "finish_reason", "upstream_id"):
        del old[name]
    assert UsageEvent.from_json(orjson.dumps(old)).end_state == ""  # added with defaults: still version 1


def test_an_event_written_before_error_code_existed_still_parses_as_version_1():
    data = orjson.loads(_event().to_json())
    del data["error_code"]
    assert data["version"] == USAGE_EVENT_VERSION == 1  # an added field with a default keeps the version
    assert UsageEvent.from_json(orjson.dumps(data)).error_code == ""


def test_route_candidates_are_pinned_round_trip_and_optional():
    candidates = (
        RouteCandidate("deepseek", 1, "winner", 0.0, {"cost": 0.0, "ttft": 0.1}, ()),
        RouteCandidate("bargain-cloud", 9, "lost:flags", 4.2, {"cost": 0.3, "flags": 3.9}, ("price_mismatch",)),
        RouteCandidate("openai", 4, "dropped:no_offering_fits"),
    )
    event = _event(route_candidates=candidates)
    data = orjson.loads(event.to_json())
    assert {frozenset(c) for c in data["route_candidates"]} == {frozenset(ROUTE_CANDIDATE_FIELDS)}
    assert UsageEvent.from_json(event.to_json()) == event
    del data["route_candidates"]  # an event written before the field existed
    assert data["version"] == USAGE_EVENT_VERSION == 1
    assert UsageEvent.from_json(orjson.dumps(data)).route_candidates == ()


def test_usage_event_of_another_version_is_refused():
    data = orjson.loads(_event().to_json())
    data["version"] = 2
    with pytest.raises(ValueError, match="unsupported usage event version"):
        UsageEvent.from_json(orjson.dumps(data))


@pytest.mark.parametrize(("name", "value"), [("status", "succeeded"), ("usage_source", "guessed"), ("status", None)])
def test_usage_event_with_a_status_or_source_outside_its_literal_is_refused(name, value):
    assert USAGE_SOURCES == ("provider", "estimated")
    data = orjson.loads(_event().to_json())
    data[name] = value
    with pytest.raises(ValueError, match="unknown usage status/source"):
        UsageEvent.from_json(orjson.dumps(data))


def test_cost_is_exact_and_rounded_up_once():
    prices = Prices(input=280_000, output=420_000, cache_read=28_000, cache_write_5m=350_000, reasoning=None)
    used = Tokens(input_uncached=1, cache_read=1, cache_write_5m=1, output=1)
    # 280000 + 28000 + 350000 + 420000 = 1_078_000 per 1M tokens -> 1.078 micro-units -> 2
    assert cost_micros(used, prices) == 2
    assert cost_micros(Tokens(input_uncached=1_000_000), prices) == 280_000
    assert cost_micros(Tokens(), prices) == 0


def test_reasoning_has_its_own_price_when_set():
    prices = Prices(input=0, output=1_000_000, reasoning=3_000_000)
    assert cost_micros(Tokens(output=1_000_000, reasoning=250_000), prices) == 750_000 + 750_000


def test_charge_adds_markup_rounded_up_and_byok_pays_the_fee_only():
    assert pricing.charge_micros(cost_micros=1_000, markup_bps=1_000, byok=False) == 1_100
    assert pricing.charge_micros(cost_micros=1, markup_bps=1, byok=False) == 2
    assert pricing.charge_micros(cost_micros=1_000, markup_bps=1_000, byok=True) == 50
    assert pricing.charge_micros(cost_micros=-5, markup_bps=0, byok=False) == 0


def test_key_record_round_trips_with_nested_types():
    record = KeyRecord(
        key_id=1,
        tenant_id=2,
        tenant_slug="acme",
        name="ci",
        prefix="tw_live_AbCd",
        allowed_models=("glm-4.6",),
        allowed_route_modes=("cost",),
        key_limits=Limits(rpm=10, tpm=1000),
        tenant_limits=Limits(max_concurrency=4),
        monthly_budget_micros=5_000_000,
        tenant_routing=RoutingPrefs(default_mode="quality", blocked_providers=("bargain-cloud",)),
        byok={"deepseek": "gAAAA"},
        markup_bps=250,
    )
    assert KeyRecord.from_json(record.to_json()) == record
    data = orjson.loads(record.to_json())
    data["version"] = 99
    with pytest.raises(ValueError):
        KeyRecord.from_json(orjson.dumps(data))


def test_snapshots_round_trip():
    offering = OfferingSnapshot(
        offering_id=5,
        model="kimi-k2",
        provider="moonshot",
        upstream_model="kimi-k2-0905",
        dialect="openai",
        base_url="http://127.0.0.1:8100/moonshot/v1",
        usage_dialect="moonshot",
        cached_tokens_in_input=True,
        prices=Prices(input=600_000, output=2_500_000),
        context_window=262_144,
        max_output=16_384,
        parameters=("tools", "json_mode"),
    )
    catalog = CatalogSnapshot(version=3, generated_at=1.5, offerings=(offering,))
    assert CatalogSnapshot.from_json(catalog.to_json()) == catalog
    stats = StatsSnapshot(
        version=9,
        generated_at=2.5,
        window="1h",
        stats={"all": {"5": OfferingStats(offering_id=5, n=40, ttft_p50_ms=420.0, flags=("price_mismatch",))}},
    )
    assert StatsSnapshot.from_json(stats.to_json()) == stats


def test_offering_stats_fields_are_pinned_and_older_and_newer_documents_parse():
    full = OfferingStats(
        offering_id=5,
        n=40,
        ttft_p50_hi_ms=480.0,
        price_n=6,
        overcount_factor=1.15,
        billed_ratio=1.3,
        quality_n=40,
        quality_lo=0.5,
        incidents=("ttft",),
        flags=("token_overcount",),
    )
    stats = StatsSnapshot(version=9, generated_at=2.5, window="1h", stats={"all": {"5": full}})
    data = orjson.loads(stats.to_json())
    assert set(data["stats"]["all"]["5"]) == STATS_FIELDS
    assert StatsSnapshot.from_json(stats.to_json()) == stats
    old = {"offering_id": 5, "n": 3, "ttft_p50_ms": 400.0, "flags": []}  # schema 1 before the interval fields
    newer = {**old, "some_future_metric": 1.0}  # a newer evaluation: the gateway ignores what it does not know
    for item in (old, newer):
        data["stats"]["all"]["5"] = item
        parsed = StatsSnapshot.from_json(orjson.dumps(data)).stats["all"]["5"]
        assert parsed == OfferingStats(offering_id=5, n=3, ttft_p50_ms=400.0)


def test_api_keys_carry_a_checksum_that_catches_any_single_change():
    key = apikey_format.generate_key(live=True)
    assert key.startswith("tw_live_") and len(key) == apikey_format.KEY_LEN
    assert apikey_format.is_well_formed(key)
    assert apikey_format.is_well_formed(apikey_format.generate_key(live=False))
    index = 20
    tampered = key[:index] + ("A" if key[index] != "A" else "B") + key[index + 1 :]
    assert not apikey_format.is_well_formed(tampered)
    for junk in ("", "tw_live_", key + "x", key.replace("tw_live_", "sk_live_"), "tw_live_" + "é" * 49):
        assert not apikey_format.is_well_formed(junk)
    assert apikey_format.hash_key(key, "pepper") != apikey_format.hash_key(key, "other")
    assert len(apikey_format.hash_key(key, "pepper")) == 64


def test_token_approximation_is_the_documented_rule():
    assert tokens.count_text_tokens("") == 0
    assert tokens.count_text_tokens("abcd") == 1
    assert tokens.count_text_tokens("abcde") == 2
    assert tokens.count_text_tokens("你好") == 2
    assert tokens.count_text_tokens("hi 你好") == 1 + 2
    assert tokens.count_value_tokens({"a": ["abcd", {"b": "abcd"}], "n": 5}) == 2


def test_token_counting_walks_deep_json_without_recursion_and_refuses_past_the_limit():
    import pytest

    from contracts import tokens

    ok: object = "abcd"
    for _ in range(tokens.MAX_NESTING - 1):
        ok = [ok]
    assert tokens.count_value_tokens(ok) == 1
    deep: object = "abcd"
    for _ in range(5000):  # far past Python's recursion limit
        deep = {"a": [deep]}
    with pytest.raises(tokens.TooDeeplyNested):
        tokens.count_value_tokens(deep)
