"""A hold covers the worst case: whatever the provider reports as cached, written to cache (5m/1h) or spent
on reasoning, the settled charge of a request within its size never exceeds the worst-case charge."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.pricing import charge_micros, worst_case_cost_micros
from contracts.usage import Prices, Tokens, cost_micros

price = st.integers(min_value=0, max_value=200_000_000)  # up to $200 per 1M tokens


@st.composite
def request_and_report(draw):
    prices = Prices(
        input=draw(price),
        output=draw(price),
        cache_read=draw(price),
        cache_write_5m=draw(price),
        cache_write_1h=draw(price),
        reasoning=draw(st.none() | price),
    )
    input_tokens = draw(st.integers(min_value=0, max_value=2_000_000))
    output_tokens = draw(st.integers(min_value=0, max_value=200_000))
    cut = sorted(draw(st.lists(st.integers(0, input_tokens), min_size=3, max_size=3)))
    split = [cut[0], cut[1] - cut[0], cut[2] - cut[1], input_tokens - cut[2]]
    reasoning = draw(st.integers(min_value=0, max_value=output_tokens))
    reported = Tokens(
        input_uncached=split[0],
        cache_read=split[1],
        cache_write_5m=split[2],
        cache_write_1h=split[3],
        output=output_tokens,
        reasoning=reasoning,
    )
    return prices, input_tokens, output_tokens, reported


@settings(max_examples=2_000, deadline=None)
@given(request_and_report(), st.integers(min_value=0, max_value=50_000), st.booleans())
def test_settled_charge_never_exceeds_the_worst_case_hold(case, markup_bps, byok):
    prices, input_tokens, output_tokens, reported = case
    worst = worst_case_cost_micros(input_tokens=input_tokens, output_tokens=output_tokens, prices=prices)
    actual = cost_micros(reported, prices)
    assert actual <= worst
    assert charge_micros(cost_micros=actual, markup_bps=markup_bps, byok=byok) <= charge_micros(
        cost_micros=worst, markup_bps=markup_bps, byok=byok
    )


def test_a_one_hour_cache_write_is_priced_into_the_hold():
    """The case that overdrew a $0.01 balance: input at the plain price left the 1h write uncovered."""
    claude = Prices(
        input=3_000_000, output=15_000_000, cache_read=300_000, cache_write_5m=3_750_000, cache_write_1h=6_000_000
    )
    worst = worst_case_cost_micros(input_tokens=10_000, output_tokens=100, prices=claude)
    written = cost_micros(Tokens(cache_write_1h=10_000, output=100), claude)
    assert worst == written == 61_500
