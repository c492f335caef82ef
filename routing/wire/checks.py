"""The body-wide check that runs before any dialect's schema (routing/wire/schemas/): nesting depth.

Field by field, a wrong type or range is the caller's mistake: each dialect's declared schema
(routing/wire/schema.py) refuses it with a precise 400 naming the field, in the caller's error shape,
instead of forwarding it for a provider to reject (or, worse, to be read as a provider failure and
failed over).
"""

from __future__ import annotations

from typing import Any

from contracts.tokens import MAX_NESTING, TooDeeplyNested, count_value_tokens
from routing.http.errors import invalid_request

Body = dict[str, Any]

# Walked with the input-token estimate (and refused there when too deep); every other field is walked here
# (the Responses ``input`` too: it is translated, not estimated, as it arrives).
_ESTIMATED_FIELDS = frozenset(("messages",))


def nesting(body: Body) -> None:
    """Refuse a body with any field nested deeper than ``MAX_NESTING``, before anything is reserved: a
    deep value in a field we only forward would otherwise fail when the body is re-encoded (a 500).
    The one iterative walk of contracts.tokens does it (its token count is not needed here)."""
    try:
        count_value_tokens({k: v for k, v in body.items() if k not in _ESTIMATED_FIELDS})
    except TooDeeplyNested:
        raise invalid_request(f"Request JSON is nested too deeply: more than {MAX_NESTING} levels.") from None
