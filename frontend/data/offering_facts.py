"""What the catalog declares about an offering, as the leaderboard shows it: context, max output,
parameters, quantisation (where the upstream model id names it), the cache-write price."""

from __future__ import annotations

import re

from catalog.selectors import Offering, OfferingPrice

# Upstream ids that name their weights' precision ("...-Instruct-FP8", "...-AWQ", "...-int4"): the only place a
# provider says it. Nothing named means "not declared", never "full precision".
_QUANT = re.compile(
    r"(?:^|[-_/.:])(fp8|fp16|bf16|fp4|nvfp4|mxfp4|int8|int4|w8a8|w4a16|awq|gptq|gguf|q[2-8]_k(?:_[msl])?)(?=$|[-_/.:])",
    re.I,
)


def quantisation(upstream_model: str) -> str:
    """The precision the upstream id names, upper-cased ("FP8"), or "" when it names none."""
    found = _QUANT.search(upstream_model or "")
    return found.group(1).upper() if found else ""


def cache_write_price(price: OfferingPrice | None) -> int | None:
    """The 5-minute cache write price (the one prompts pay by default); None when the provider has no charge for it."""
    if price is None:
        return None
    return price.cache_write_5m or None


def parameters(offering: Offering) -> tuple[str, ...]:
    return tuple(sorted(str(p) for p in (offering.parameters or [])))
