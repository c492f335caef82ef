"""What the tenant pays follows from how its call ended (docs/billing.md, "End states").

The gateway already zeroes the charge of a call that broke on the provider's or our side; metering
holds the same line when it recomputes a charge (a cost that did not match its price snapshot), so no
path can bill a tenant for a cut stream, a timeout or our own failure.
"""

from __future__ import annotations

from dataclasses import replace

from contracts.usage import CHARGED_END_STATES, UsageEvent
from metering.sanitize import Priced


def end_state_priced(event: UsageEvent, priced: Priced) -> Priced:
    """The priced event with no charge when its end state is not one the tenant pays for."""
    if event.end_state in CHARGED_END_STATES or priced.charge_micros == 0:
        return priced
    return replace(priced, charge_micros=0, flags=tuple(dict.fromkeys((*priced.flags, "not_charged"))))
