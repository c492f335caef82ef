"""What admission holds for a call on an offering: the worst case of what the call can be charged.

Its output side is the call's output allowance (contracts.holds): the answer the caller allowed plus the
reasoning the model spends beyond it; settlement clamps output to the same allowance, so no charge
passes its hold (docs/billing.md, "Holds bound every charge").
"""

from __future__ import annotations

from contracts.holds import hold_micros, output_allowance
from contracts.keyrecord import KeyRecord
from contracts.snapshot import OfferingSnapshot
from routing.wire.request import RequestView

INPUT_ESTIMATE_MARGIN_PCT = 50  # holds assume up to 1.5x our input estimate: the provider's count is what bills


def call_hold(offering: OfferingSnapshot, view: RequestView, record: KeyRecord) -> int:
    """Tenant charge if the input (with the estimate's margin) lands at the dearest input-side price
    (cache writes included) and every allowed output token is used at the dearer of output and reasoning."""
    return hold_micros(
        input_tokens=with_margin(view.input_estimate), output_allowance=allowance(offering, view),
        prices=offering.prices, markup_bps=record.markup_bps, byok=offering.provider in record.byok,
    )  # fmt: skip


def allowance(offering: OfferingSnapshot, view: RequestView) -> int:
    """The most output (reasoning included) the call may be charged for on this offering."""
    return output_allowance(
        max_tokens=view.max_tokens, max_output=offering.max_output, max_reasoning_tokens=offering.max_reasoning_tokens
    )


def with_margin(estimate: int) -> int:
    """Our estimate is ~4 characters a token; real tokenizers count code and JSON denser."""
    return estimate + estimate * INPUT_ESTIMATE_MARGIN_PCT // 100
