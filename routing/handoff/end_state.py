"""How a call ended, and what that means for the money (docs/billing.md, "End states").

The provider's cost is always booked as the provider will bill it (the tracker's tokens: its own
usage where it came, else what was delivered); the end state only decides whether the tenant pays.
"""

from __future__ import annotations

from dataclasses import replace

from contracts.holds import charge_within_hold
from contracts.usage import CHARGED_END_STATES, EndState
from routing.handoff.call import Bill, Call
from routing.usage.answer_facts import with_thinking

HOLD_EXHAUSTED = "hold_exhausted"  # the flag routing.relay.answer sets when it ends a stream at its output allowance


def end_state(call: Call) -> EndState:
    """Read from what the call went through; decided before the admission of a departed client is
    awaited (``call.admission`` is still None then)."""
    if call.status == "rejected":
        return "rejected"
    if HOLD_EXHAUSTED in call.extra_flags:  # ended by us at its allowance (routing.relay.answer), whoever left after
        return "hold_exhausted"
    if call.client_gone:
        return _client_gone(call)
    if call.status == "ok" and call.complete:
        return "completed"
    if call.error_code == "internal_error" or call.status != "upstream_error":
        return "gateway_error"
    if call.response_started:
        return "upstream_timeout" if "upstream_timeout" in call.extra_flags else "upstream_cut"
    return "upstream_timeout" if call.error_code == "upstream_timeout" else "upstream_error"


def _client_gone(call: Call) -> EndState:
    if call.complete:
        return "completed"  # the last byte was on its way: the answer was whole
    if call.admission is None:
        return "client_gone_in_admission"
    return "client_cancelled" if call.response_started else "client_gone_before_answer"


def tenant_bill(bill: Bill, state: EndState) -> Bill:
    """The bill with the tenant's charge as this end state decides; the provider cost untouched."""
    if state in CHARGED_END_STATES or bill.charge_micros == 0:
        return bill
    return replace(bill, charge_micros=0, flags=(*bill.flags, "not_charged"))


def final_bill(call: Call, state: EndState) -> Bill:
    """What the call costs (provider) and charges (tenant), as the usage event and settlement book it."""
    bill = call.bill()
    prices = call.offering.prices if call.offering is not None else None
    tokens, flags = with_thinking(bill.tokens, call.facts, prices)
    if flags:
        bill = replace(bill, tokens=tokens, flags=(*bill.flags, *flags))
    return within_hold(tenant_bill(bill, state), call.admission.hold_micros if call.admission else None)


def within_hold(bill: Bill, hold: int | None) -> Bill:
    """The charge never passes the hold admission took (contracts.holds.charge_within_hold): flagged
    ``charge_capped_at_hold`` when it would have (input beyond the estimate's margin)."""
    if hold is None or bill.charge_micros <= hold:
        return bill
    return replace(bill, charge_micros=charge_within_hold(bill.charge_micros, hold),
                   flags=(*bill.flags, "charge_capped_at_hold"))  # fmt: skip
