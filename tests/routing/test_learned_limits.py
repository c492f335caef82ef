"""Learned rate limits: the providers' headers (as the simulated fleet sends them), the send count,
429s, the catalog's declared RPM as the prior, the load forecast, and sharing across processes."""

from __future__ import annotations

import asyncio
import os
import random
from dataclasses import replace
from types import SimpleNamespace

import pytest

from contracts.snapshot import OfferingSnapshot
from contracts.usage import Prices
from routing.hedging.policy import tracked
from routing.http.errors import UpstreamFailure
from routing.limits.board import LOAD_PENALTY, LimitBoard
from routing.limits.forecast import Holt, forecast_error
from routing.limits.ratelimit_headers import go_duration_s, parse
from routing.limits.shared import LIMITS_KEY, sync_once
from routing.redis.client import redis_client as gateway_redis
from sim.dialects.headers import anthropic_limits, openai_limits
from sim.ratelimit import Admission
from tests.waiting import ManualClock

pytestmark = pytest.mark.cluster

T0 = 1_700_000_000.0
OFFERING = OfferingSnapshot(
    offering_id=5,
    model="m",
    provider="p",
    upstream_model="m",
    dialect="openai",
    base_url="http://127.0.0.1:9/v1",
    usage_dialect="openai",
    cached_tokens_in_input=True,
    prices=Prices(input=1, output=1),
    context_window=100_000,
    max_output=4096,
    rpm=20,
    tpm=None,
)


def test_both_dialects_headers_as_the_fleet_sends_them_are_read():
    admission = Admission(True, 20, 7, 40_000, 1_234, 12.5)
    openai = parse(openai_limits(admission, 12.5))
    assert (openai.limit_requests, openai.remaining_requests, openai.remaining_tokens) == (20, 7, 1_234)
    assert openai.reset_s == pytest.approx(12.5, abs=0.5)
    anthropic = parse(anthropic_limits(admission, 30.0), now=None)
    assert (anthropic.limit_requests, anthropic.remaining_requests, anthropic.limit_tokens) == (20, 7, 40_000)
    assert anthropic.reset_s == pytest.approx(30.0, abs=1.5)  # the instant has whole seconds
    assert parse({"content-type": "application/json"}).empty


def test_go_durations_and_garbage():
    assert go_duration_s("6m0s") == 360.0
    assert go_duration_s("120ms") == pytest.approx(0.12)
    assert go_duration_s("1.5s") == 1.5
    assert go_duration_s("soon") is None
    assert parse({"x-ratelimit-remaining-requests": "many"}).remaining_requests is None


def test_the_declared_rpm_is_the_prior_until_a_header_speaks():
    clock = ManualClock(T0)
    board = LimitBoard(clock=clock)
    for _ in range(19):
        board.finished(board.sent(5, 100), None)
    assert not board.assess(OFFERING, 100).exhausted
    board.sent(5, 100)
    assert board.assess(OFFERING, 100).exhausted  # 20 sent in the last minute, 20 RPM declared
    clock.advance(61)
    assert not board.assess(OFFERING, 100).exhausted  # the sliding minute has passed


def test_headers_count_every_request_sent_after_the_one_they_answer_and_older_ones_unanswered():
    clock = ManualClock(T0)
    board = LimitBoard(clock=clock)
    first = board.sent(5, 100)
    later = [board.sent(5, 100) for _ in range(2)]  # sent before the first one's answer came back
    board.finished(first, parse({"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "40s"}))
    assert board.assess(OFFERING, 100).requests_left == 1  # 3 left then, 2 sent since
    board.finished(later[1], parse({"x-ratelimit-remaining-requests": "1", "x-ratelimit-reset-requests": "40s"}))
    assert board.assess(OFFERING, 100).requests_left == 0  # the newest view, less the older one still unanswered
    board.finished(later[0], parse({"x-ratelimit-remaining-requests": "9"}))  # an older view: ignored
    board.sent(5, 100)
    assert board.assess(OFFERING, 100).exhausted
    clock.advance(41)  # the window the provider named has refilled: the limit minus what came after
    assert board.assess(OFFERING, 100).requests_left == 20


def test_a_429_leaves_nothing_until_retry_after():
    clock = ManualClock(T0)
    board = LimitBoard(clock=clock)
    board.throttled(board.sent(5, 100), 5.0)
    assert board.assess(OFFERING, 100).exhausted
    clock.advance(5.5)
    assert not board.assess(OFFERING, 100).exhausted


def test_tokens_left_below_the_request_is_exhausted():
    board = LimitBoard(clock=ManualClock(T0))
    board.finished(board.sent(5, 100), parse({"x-ratelimit-remaining-tokens": "500"}))
    assert not board.assess(OFFERING, 400).exhausted
    assert board.assess(OFFERING, 600).exhausted


def test_a_steady_stream_is_demoted_before_the_cliff_not_after():
    """2 requests a second against 60 left: the 15 s forecast (~30) is under half of it, no penalty;
    with 25 left the forecast nears the cliff and the offering is demoted while it still has room."""
    clock = ManualClock(T0)
    board = LimitBoard(clock=clock)
    offering = replace(OFFERING, rpm=None)
    for _ in range(30):
        for _ in range(2):
            ticket = board.sent(5, 100)
            board.finished(ticket, None)
        clock.advance(1)
    board.finished(ticket, parse({"x-ratelimit-remaining-requests": "60", "x-ratelimit-reset-requests": "30s"}))
    roomy = board.assess(offering, 100)
    assert roomy.forecast == pytest.approx(30, rel=0.15) and roomy.penalty == 0.0
    board.finished(ticket, parse({"x-ratelimit-remaining-requests": "25", "x-ratelimit-reset-requests": "30s"}))
    near = board.assess(offering, 100)
    assert not near.exhausted and near.penalty == LOAD_PENALTY
    board.enabled = False
    assert board.assess(offering, 100).penalty == 0.0


def test_holt_follows_a_ramp_and_the_forecast_error_is_measured():
    holt = Holt(alpha=0.5, beta=0.3)
    for second in range(60):
        holt.add(second / 10)  # a ramp to 6 requests a second
    assert holt.trend == pytest.approx(0.1, rel=0.1)
    assert holt.over(10) == pytest.approx(sum(6 + h / 10 for h in range(10)), rel=0.1)
    rng = random.Random(4)
    series = [_poisson(rng, 2 + 6 * min(1, t / 300) + (8 if 400 <= t < 430 else 0)) for t in range(600)]
    error = forecast_error(series, horizon_s=15)
    assert error.points > 500
    assert error.relative < 0.3, error  # within 30% of the window's load on average
    assert error.mae < error.mae_naive  # and better than "the last second repeats"


def _poisson(rng: random.Random, rate: float) -> int:
    count, total = 0, rng.expovariate(rate)
    while total < 1:
        count, total = count + 1, total + rng.expovariate(rate)
    return count


def test_two_processes_share_sends_and_the_newest_observation(redis_client):
    clock = ManualClock(T0)
    a, b = LimitBoard(clock=clock), LimitBoard(clock=clock)

    async def scenario() -> None:
        redis = gateway_redis(os.environ["REDIS_URL"], None)
        await redis.connect()
        try:
            await sync_once(redis, b)  # b learns where the counters stand
            ticket = a.sent(5, 100)
            for _ in range(3):
                a.sent(5, 100)
            a.finished(ticket, parse({"x-ratelimit-remaining-requests": "10", "x-ratelimit-reset-requests": "50s"}))
            assert a.assess(OFFERING, 100).requests_left == 7
            await sync_once(redis, a)
            await sync_once(redis, b)
            assert b.assess(OFFERING, 100).requests_left == 7  # a's observation and a's later sends
            for _ in range(7):
                b.sent(5, 100)
            assert b.assess(OFFERING, 100).exhausted
            await sync_once(redis, b)
            await sync_once(redis, a)
            assert a.assess(OFFERING, 100).exhausted  # b's sends reached a
            assert a.get(5).seq == 11  # counted once each, for the forecast too
        finally:
            await redis.close()

    asyncio.run(scenario())
    assert redis_client.ttl(LIMITS_KEY) > 0


def test_the_router_drops_an_exhausted_offering_and_demotes_one_near_its_limit():
    from routing.router.candidates import Need
    from routing.router.explain import decisive
    from routing.router.route import within_limits
    from routing.router.strategy import DefaultScorer, Signals

    board = LimitBoard(clock=ManualClock(T0))
    other = replace(OFFERING, offering_id=6, provider="q", rpm=None)
    need = Need(100, 50, frozenset())
    dropped: list[tuple[OfferingSnapshot, str]] = []
    for _ in range(20):
        board.sent(5, 150)
    pool, loads = within_limits([OFFERING, other], board, need, dropped)
    assert pool == [other] and dropped == [(OFFERING, "near_limit")]
    pool, loads = within_limits([OFFERING], board, need, dropped := [])
    assert pool == [OFFERING] and loads[0].exhausted  # nothing else left: still tried
    near = Signals(OFFERING, None, None, 100.0, load_penalty=LOAD_PENALTY)
    scored = DefaultScorer().scored(
        [near, Signals(other, None, None, 150.0)], mode="balanced", sort=None, affinity=None
    )
    assert [x.signals.offering.provider for x in scored] == ["q", "p"]
    assert decisive(scored) == "load" and scored[1].parts["load"] == LOAD_PENALTY


def test_a_sync_in_flight_across_a_reset_writes_nothing_into_the_new_state(redis_client):
    board = LimitBoard(clock=ManualClock(T0))

    async def scenario() -> None:
        redis = gateway_redis(os.environ["REDIS_URL"], None)
        await redis.connect()
        try:
            await sync_once(redis, board)
            ticket = board.sent(5, 100)
            board.finished(ticket, parse({"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "50s"}))
            syncing = asyncio.ensure_future(sync_once(redis, board))
            await asyncio.sleep(0)  # the EVAL is on its way
            board.reset()
            await syncing
        finally:
            await redis.close()

    asyncio.run(scenario())
    assert board.items() == []


def test_headers_are_read_near_the_limit_and_now_and_then_far_from_it():
    clock = ManualClock(T0)
    board = LimitBoard(clock=clock)
    roomy = {
        "x-ratelimit-limit-requests": "5000",
        "x-ratelimit-remaining-requests": "4000",
        "x-ratelimit-reset-requests": "30s",
    }
    first = board.sent(5, 100)
    assert board.wants_headers(first)  # nothing known yet
    board.finished(first, parse(roomy))
    read = [board.wants_headers(board.sent(5, 100)) for _ in range(32)]
    assert sum(read) == 2  # one answer in 16 while thousands are left
    ticket = board.sent(5, 100)
    board.finished(ticket, parse({**roomy, "x-ratelimit-remaining-requests": "90"}))
    assert board.wants_headers(board.sent(5, 100))  # near the limit: every answer
    clock.advance(31)
    assert board.wants_headers(board.sent(5, 100))  # the window refilled: look again


def test_calls_planned_on_the_same_last_request_send_it_once():
    """Routing happens an await (admission) before the send: two calls can both plan on the last request
    left. At the send the room is checked again with the count in the same step: the second call is
    passed over to its fallback without reaching the provider; with none left it is sent."""
    board = LimitBoard(clock=ManualClock(T0))
    for _ in range(19):
        board.finished(board.sent(5, 100), None)
    assert not board.assess(OFFERING, 100).exhausted  # both calls plan on the 20th request
    call = SimpleNamespace(record=SimpleNamespace(byok={}), view=SimpleNamespace(input_estimate=50, max_tokens=50))
    reached: list[str] = []

    async def provider(name: str) -> SimpleNamespace:
        reached.append(name)
        return SimpleNamespace(name=name, response=SimpleNamespace(headers={}))

    async def both(last: bool) -> list[object]:
        attempts = [tracked(board, call, OFFERING, provider(n), fallback=not last) for n in ("a", "b")]  # type: ignore[arg-type]
        return await asyncio.gather(*attempts, return_exceptions=True)

    first, second = asyncio.run(both(last=False))
    assert getattr(first, "name", None) == "a", first
    assert isinstance(second, UpstreamFailure) and second.kind == "limit_room", second
    assert reached == ["a"]
    asyncio.run(both(last=True))
    assert reached == ["a", "a", "b"]  # the last candidate is sent, spent or not, as the router would
    by_tokens = replace(OFFERING, rpm=None, tpm=1_000)  # and a TPM window's room, by the request's size
    board.reset()
    board.sent(5, 900)
    assert board.gone(by_tokens, 101) and not board.gone(by_tokens, 100)
