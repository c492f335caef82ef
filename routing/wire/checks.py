"""The body-wide walk that runs before any dialect's schema (routing/wire/schemas/): nesting depth,
and the input-token estimate in the same pass.

Field by field, a wrong type or range is the caller's mistake: each dialect's declared schema
(routing/wire/schema.py) refuses it with a precise 400 naming the field, in the caller's error shape,
instead of forwarding it for a provider to reject (or, worse, to be read as a provider failure and
failed over).
"""

from __future__ import annotations

from typing import Any

from contracts.tokens import MAX_NESTING, TooDeeplyNested, count_value_tokens
from routing.http.errors import GatewayError, invalid_request

Body = dict[str, Any]


def too_deep() -> GatewayError:
    return invalid_request(f"Request JSON is nested too deeply: more than {MAX_NESTING} levels.")


def nesting(body: Body) -> None:
    """Refuse a body with any field nested deeper than ``MAX_NESTING``, before anything is reserved: a
    deep value in a field we only forward would otherwise fail when the body is re-encoded (a 500)."""
    measure(body, ())


def measure(body: Body, counted: tuple[str, ...]) -> int:
    """One walk of the whole body: the tokens of the strings in the ``counted`` fields (the input
    estimate's: messages, system, tools) and, for every field, the nesting check (a refusal when too
    deep). Top-level scalars (model, max_tokens, stream) are not visited; each container is walked
    once, by the one iterative walk of contracts.tokens. A top-level value sits one level down (the
    body is level 0); a counted field keeps the depth the estimate always gave it."""
    total = 0
    try:
        for key, value in body.items():
            kind = type(value)
            if key in counted:
                total += count_value_tokens(value)
            elif kind is dict or kind is list:
                count_value_tokens(value, max_depth=MAX_NESTING - 1)
    except TooDeeplyNested:
        raise too_deep() from None
    return total
