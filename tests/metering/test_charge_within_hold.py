"""Metering holds the gateway's line when it re-prices an event (docs/billing.md, "Holds bound every
charge"): a charge recomputed from the tokens never passes the hold the event was admitted with."""

from __future__ import annotations

from contracts.usage import Tokens, cost_micros
from metering.sanitize import event_price
from tests.metering.conftest import PRICES, make_event

TOKENS = Tokens(input_uncached=10_000, output=500)  # 20,000 + 4,000 µ$ at PRICES


def test_a_recomputed_charge_is_capped_at_the_events_hold():
    event = make_event(1, tokens=TOKENS, cost_micros=1, charge_micros=1, hold_id="h1", hold_micros=20_000)
    priced = event_price(event, markup_bps=0)
    assert priced.cost_micros == cost_micros(TOKENS, PRICES) == 24_000  # the provider cost stays what it is
    assert priced.charge_micros == 20_000
    assert {"cost_recomputed", "charge_capped_at_hold"} <= set(priced.flags)


def test_a_recomputed_charge_within_its_hold_and_an_event_without_a_hold_are_left_alone():
    within = make_event(1, tokens=TOKENS, cost_micros=1, charge_micros=1, hold_id="h2", hold_micros=30_000)
    unheld = make_event(1, tokens=TOKENS, cost_micros=1, charge_micros=1)
    assert event_price(within, markup_bps=0).charge_micros == 24_000
    assert event_price(unheld, markup_bps=0).charge_micros == 24_000
    assert "charge_capped_at_hold" not in event_price(within, markup_bps=0).flags
