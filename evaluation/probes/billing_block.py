"""The Claude Code billing block: a first system block whose `cch=` value changes per request.

Providers that cache by raw prefix see a new prefix on every request, so the
cache never hits. The gateway strips the block before forwarding (routing's
cache hygiene); the probe's "stripped" variant applies the same rule here
(a system block starting with the billing prefix is dropped).
"""

from __future__ import annotations

import random

BILLING_PREFIX = "x-anthropic-billing-header:"
CC_VERSION = "2.1.37"


def billing_block(rng: random.Random) -> str:
    return f"{BILLING_PREFIX} cc_version={CC_VERSION}; cc_entrypoint=cli; cch={rng.getrandbits(40):010x};"


def strip_billing_blocks(system: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(block for block in system if not block.lstrip().startswith(BILLING_PREFIX))
