"""``UsageEvent.storable``: what PostgreSQL refuses is repaired where the event is built and read; an event
that needs nothing is returned as it is (the gateway's hot path); a value of the wrong type is refused."""

from __future__ import annotations

import dataclasses
import math

import orjson
import pytest

from contracts.route_explain import RouteCandidate
from contracts.storable import BIGINT_MAX, EPOCH_MAX_S, REPLACEMENT
from contracts.usage import TEXT_COLUMNS, Prices, Tokens, UsageEvent

EVENT = UsageEvent(
    request_id="gen-0123456789abcdef01234567",
    tenant_id=5,
    key_id=50,
    model="deepseek-v4-flash",
    offering_id=7,
    provider="deepseek",
    region="beijing",
    route_mode="balanced",
    route_reason="cheapest healthy",
    tokens=Tokens(input_uncached=100, output=50),
    usage_source="provider",
    prices=Prices(input=1, output=2),
    cost_micros=100,
    charge_micros=120,
    status="ok",
    http_status=200,
    stream=True,
    started_at=1.7e9,
    finished_at=1.7e9 + 1,
    total_ms=12.0,
    route_candidates=(RouteCandidate("deepseek", 7, "winner", 1.0),),
)


def test_an_event_that_needs_nothing_is_returned_as_it_is():
    assert EVENT.storable() is EVENT
    assert dataclasses.replace(EVENT, model="模型-é").storable().model == "模型-é"  # non-ASCII is storable


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"model": "deepseek-v3.2\x00"}, {"model": f"deepseek-v3.2{REPLACEMENT}"}),
        ({"model": "a\ud800b"}, {"model": f"a{REPLACEMENT}b"}),
        ({"route_mode": "x" * 40}, {"route_mode": "x" * TEXT_COLUMNS["route_mode"]}),
        ({"tenant_id": 2**70}, {"tenant_id": BIGINT_MAX}),
        ({"tokens": Tokens(output=2**64)}, {"tokens": Tokens(output=BIGINT_MAX)}),
        ({"finished_at": 1e20, "started_at": math.nan}, {"finished_at": EPOCH_MAX_S, "started_at": 0.0}),
        ({"total_ms": math.inf, "ttft_ms": -1.0}, {"total_ms": 0.0, "ttft_ms": 0.0}),
        ({"flags": ("ok", "bad\x00")}, {"flags": ("ok", f"bad{REPLACEMENT}")}),
    ],
)
def test_values_postgresql_refuses_are_repaired(change, expected):
    repaired = dataclasses.replace(EVENT, **change).storable()
    assert {name: getattr(repaired, name) for name in expected} == expected
    assert b"\\u0000" not in repaired.to_json()


def test_route_candidates_and_request_ids_keep_what_matters():
    event = dataclasses.replace(
        EVENT, route_candidates=(RouteCandidate("p\x00", 1, "lost:\x00", parts={"k\x00": 1.0}),)
    )
    [candidate] = event.storable().route_candidates
    assert (candidate.provider, candidate.verdict, candidate.parts) == ("p\ufffd", "lost:\ufffd", {"k\ufffd": 1.0})
    long_a = dataclasses.replace(EVENT, request_id="r" * 100 + "a").storable().request_id
    long_b = dataclasses.replace(EVENT, request_id="r" * 100 + "b").storable().request_id
    assert len(long_a) == len(long_b) == 64 and long_a != long_b  # two ids stay two ids
    assert dataclasses.replace(EVENT, request_id="r" * 100 + "a").storable().request_id == long_a  # and stable


def test_a_value_of_the_wrong_type_is_refused_and_parsing_repairs():
    with pytest.raises(TypeError):
        dataclasses.replace(EVENT, tokens=Tokens(output="many")).storable()
    raw = orjson.loads(EVENT.to_json())
    parsed = UsageEvent.from_json(orjson.dumps({**raw, "model": "m\x00", "error_code": "e" * 500}))
    assert (parsed.model, len(parsed.error_code)) == (f"m{REPLACEMENT}", TEXT_COLUMNS["error_code"])
