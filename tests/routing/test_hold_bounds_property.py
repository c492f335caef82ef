"""Holds bound every charge (docs/billing.md, "Holds bound every charge"), as a property over generated calls.

Each call goes through the real parts between admission and settlement: the gateway's hold
(routing.handoff.hold.call_hold) for a body read by the caller's dialect, the admission and settlement Lua
scripts on a real Redis, the provider's usage in its usage dialect read by the gateway's tracker, the end
state and final bill (routing.handoff.end_state), the usage event, and metering's re-pricing of that event
(metering.sanitize, metering.end_states). Prices (cache reads and writes included), reasoning, the model's
reasoning cap, max_tokens, the prompt, how far the provider's counts are off (input and output, up to
twice the truth), and how the stream ended are drawn at random.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord, Limits
from contracts.provider_usage import USAGE_DIALECTS
from contracts.snapshot import OfferingSnapshot
from contracts.usage import Prices
from metering.end_states import end_state_priced
from metering.sanitize import event_price
from routing.handoff.call import Call
from routing.handoff.emit import build_event
from routing.handoff.end_state import HOLD_EXHAUSTED, end_state, final_bill
from routing.handoff.hold import call_hold
from routing.http.errors import GatewayError
from routing.limits.admission import admit, settle
from routing.redis.client import redis_client as gateway_redis
from routing.redis.pipe import PipelinedRedis
from routing.usage.tracker import UsageTracker
from routing.wire.dialects import ANTHROPIC, OPENAI, RESPONSES, Dialect
from sim.dialects.usage_shapes import usage_object
from sim.usage import SimUsage

price = st.integers(min_value=0, max_value=200_000_000)  # up to $200 per 1M tokens
_tenants = itertools.count(700_000)  # one tenant per example: no state shared between examples
ENDINGS = ("completed", "client_cancelled", "hold_exhausted", "upstream_cut")


@dataclass(frozen=True)
class Ask:
    """One call: the offering it lands on, what the caller sent, what the provider reports, how it ended."""

    offering: OfferingSnapshot
    dialect: Dialect
    body: dict[str, Any]
    input_factor: float  # provider's input count / our estimate (tokenizers differ; some over-count)
    cached: tuple[float, float, float]  # shares of the input read from / written to (5m, 1h) the cache
    output_share: float  # true output as a share of the allowance (above 1: reasoning past the model's cap)
    reasoning_share: float
    overreport: float  # reported = true x this (sim.usage.SimUsage.inflated)
    ending: str
    markup_bps: int
    byok: bool


@st.composite
def offerings(draw: st.DrawFn) -> OfferingSnapshot:
    usage_dialect = draw(st.sampled_from(USAGE_DIALECTS))
    prices = Prices(
        input=draw(price),
        output=draw(price),
        cache_read=draw(price),
        cache_write_5m=draw(price),
        cache_write_1h=draw(price),
        reasoning=draw(st.none() | price),
    )
    return OfferingSnapshot(
        offering_id=1,
        model="m",
        provider="p",
        upstream_model="m",
        dialect="anthropic" if usage_dialect == "anthropic" else "openai",
        base_url="http://127.0.0.1:1/p/v1",
        usage_dialect=usage_dialect,
        cached_tokens_in_input=usage_dialect != "anthropic",
        prices=prices,
        context_window=1_000_000,
        max_output=draw(st.integers(1, 200_000)),
        max_reasoning_tokens=draw(st.sampled_from((0, 0, 1, 64, 32_768))),
    )


@st.composite
def bodies(draw: st.DrawFn) -> tuple[Dialect, dict[str, Any]]:
    dialect = draw(st.sampled_from((OPENAI, ANTHROPIC, RESPONSES)))
    text = "q" + "x" * draw(st.integers(0, 40_000))  # never empty: the Responses API refuses an empty input
    cap = draw(st.integers(1, 300_000))
    if dialect is ANTHROPIC:
        return dialect, {"model": "m", "max_tokens": cap, "messages": [{"role": "user", "content": text}]}
    if dialect is RESPONSES:
        return dialect, {"model": "m", "input": text, **draw(st.sampled_from(({}, {"max_output_tokens": cap})))}
    caps: tuple[dict[str, int], ...] = ({}, {"max_tokens": cap}, {"max_completion_tokens": cap})
    return dialect, {"model": "m", "messages": [{"role": "user", "content": text}], **draw(st.sampled_from(caps))}


@st.composite
def asks(draw: st.DrawFn) -> Ask:
    dialect, body = draw(bodies())
    shares = st.floats(0, 1)
    return Ask(
        offering=draw(offerings()),
        dialect=dialect,
        body=body,
        input_factor=draw(st.floats(0, 2)),
        cached=(draw(shares), draw(shares), draw(shares)),
        output_share=draw(st.floats(0, 3)),
        reasoning_share=draw(shares),
        overreport=draw(st.sampled_from((1.0, 1.15, 1.5, 2.0))),
        ending=draw(st.sampled_from(ENDINGS)),
        markup_bps=draw(st.integers(0, 50_000)),
        byok=draw(st.booleans()),
    )


def _record(tenant_id: int, ask: Ask) -> KeyRecord:
    return KeyRecord(
        key_id=tenant_id,
        tenant_id=tenant_id,
        tenant_slug=f"t{tenant_id}",
        name="k",
        prefix="tw_test",
        key_limits=Limits(),
        tenant_limits=Limits(),
        markup_bps=ask.markup_bps,
        byok={"p": "env"} if ask.byok else {},
    )


def _true_usage(call: Call, ask: Ask) -> SimUsage:
    """What the provider generated (output past the allowance: reasoning no max_tokens stopped)."""
    total = int(call.view.input_estimate * ask.input_factor)
    read = int(total * ask.cached[0])
    write_5m = int((total - read) * ask.cached[1])
    write_1h = int((total - read - write_5m) * ask.cached[2])
    output = int(call.output_allowance() * ask.output_share)
    return SimUsage(total, read, write_5m, write_1h, output, int(output * ask.reasoning_share))


def _usage_object(usage_dialect: str, u: SimUsage) -> dict[str, Any]:
    if usage_dialect != "anthropic":
        return usage_object(usage_dialect, u)
    return {
        "input_tokens": u.input_uncached, "cache_read_input_tokens": u.cache_read, "output_tokens": u.output,
        "cache_creation": {"ephemeral_5m_input_tokens": u.cache_write_5m, "ephemeral_1h_input_tokens": u.cache_write_1h},
    }  # fmt: skip


def _answer(call: Call, ask: Ask) -> None:
    """The provider's answer as the relay would have left the call."""
    reported = _true_usage(call, ask).inflated(ask.overreport)
    call.status, call.http_status, call.response_started, call.delivered = "ok", 200, True, True
    call.tracker.delivered("y" * 4 * min(reported.output, 10**6))
    if ask.ending == "completed":
        call.tracker.merge(_usage_object(ask.offering.usage_dialect, reported))
        call.complete = True
    elif ask.ending == "client_cancelled":
        call.client_gone = True
        call.tracker.merge(_usage_object(ask.offering.usage_dialect, reported))
    elif ask.ending == "hold_exhausted":  # routing.relay.answer ended it: no usage came, our count of what streamed
        call.extra_flags.append(HOLD_EXHAUSTED)
    else:
        call.status = "upstream_error"


async def _run(pipe: PipelinedRedis, tenant_id: int, balance: int, calls: list[Ask]) -> list[tuple[int, int]]:
    """(hold, charge) of every admitted call, each settled in turn."""
    settled = []
    for n, ask in enumerate(calls):
        record = _record(tenant_id, ask)
        view = ask.dialect.view(dict(ask.body))
        call = Call(f"req_{tenant_id}_{n}", ask.dialect, view, {}, {}, record, UsageTracker(view.input_estimate))
        hold = call_hold(ask.offering, view, record)
        try:
            call.admission = await admit(pipe, record, tokens=1, hold_micros=hold, lifetime_s=60.0)
        except GatewayError as refused:
            assert refused.code == "insufficient_balance"
            continue
        call.offering, call.byok = ask.offering, ask.byok
        _answer(call, ask)
        state = end_state(call)
        event = build_event(call, final_bill(call, state), "beijing", state)
        booked = end_state_priced(event, event_price(event, markup_bps=ask.markup_bps))
        assert event.charge_micros <= hold, (state, event.flags)
        assert booked.charge_micros == event.charge_micros  # metering books what the gateway settled
        assert booked.tokens.output <= call.output_allowance()
        await settle(pipe, call.admission, charge_micros=event.charge_micros, tokens_used=0)
        settled.append((hold, event.charge_micros))
    return settled


async def _scenario(balance: int, calls: list[Ask]) -> tuple[int, list[tuple[int, int]]]:
    pipe = gateway_redis(os.environ["REDIS_URL"], None)
    await pipe.connect()
    tenant_id = next(_tenants)
    try:
        await pipe.execute("SET", rk.tenant_available(tenant_id), balance)
        settled = await _run(pipe, tenant_id, balance, calls)
        return int(await pipe.execute("GET", rk.tenant_available(tenant_id))), settled
    finally:
        await pipe.close()


@pytest.mark.usefixtures("redis_client")  # a flushed Redis for the scripts
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(min_value=0, max_value=5_000_000), st.lists(asks(), min_size=1, max_size=8))
def test_no_call_is_charged_beyond_its_hold_and_no_tenant_consumes_more_than_it_held(balance, calls):
    available, settled = asyncio.run(_scenario(balance, calls))
    assert all(charge <= hold for hold, charge in settled)
    consumed = sum(charge for _, charge in settled)
    assert consumed <= balance
    assert available == balance - consumed >= 0  # every hold given back, less exactly what was charged


def test_a_reasoning_call_with_a_tiny_max_tokens_is_held_for_the_models_reasoning_cap(redis_client: redis.Redis):
    """The issue's case: DeepSeek's reasoner with max_tokens 10 is held for 10 + 32,768 output tokens."""
    offering = OfferingSnapshot(
        offering_id=1,
        model="deepseek-r1",
        provider="deepseek",
        upstream_model="deepseek-reasoner",
        dialect="openai",
        base_url="http://127.0.0.1:1/deepseek/v1",
        usage_dialect="deepseek",
        cached_tokens_in_input=True,
        prices=Prices(input=280_000, output=420_000, cache_read=28_000),
        context_window=131_072,
        max_output=65_536,
        max_reasoning_tokens=32_768,
    )
    view = OPENAI.view({"model": "deepseek-r1", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]})
    ask = Ask(offering, OPENAI, {}, 1.0, (0, 0, 0), 1.0, 0.5, 1.0, "completed", 0, False)
    hold = call_hold(offering, view, _record(1, ask))
    assert hold == -(-(view.input_estimate * 3 // 2 * 280_000 + (10 + 32_768) * 420_000) // 1_000_000)
