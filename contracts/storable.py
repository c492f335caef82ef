"""Values PostgreSQL will store: text without NUL or unpaired surrogates, clipped to its column;
integers inside ``bigint``; finite timestamps inside the calendar the ledger can hold.

The usage event is made storable where it is built (the gateway) and again where it is read
(metering), so no value a tenant or a provider chooses can make a batch of usage unstorable
(docs/billing.md, "A usage pipeline no single event can stop"). Each helper is a cheap check
first: an already storable value is returned as it is.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

BIGINT_MAX = 2**63 - 1  # PostgreSQL bigint
BIGINT_MIN = -(2**63)
SMALLINT_MAX = 2**15 - 1
# Epoch seconds the ledger stores as timestamptz and Python as datetime: 1970 up to 2100-01-01, a bound
# far past any real call that keeps a bogus finish time out of a partition centuries away.
EPOCH_MAX_S = 4_102_444_800.0
REPLACEMENT = "\ufffd"  # what a refused character becomes: visible, and never mistaken for the original


def text_storable(value: str, limit: int | None = None) -> str:
    """NUL (refused by ``text`` and ``jsonb``) and unpaired surrogates (not UTF-8) become U+FFFD;
    the result is clipped to ``limit`` characters (a ``varchar(n)`` counts characters)."""
    if not value.isascii():
        value = (
            "".join(REPLACEMENT if "\ud800" <= ch <= "\udfff" else ch for ch in value)
            if _has_surrogate(value)
            else value
        )
    if "\x00" in value:
        value = value.replace("\x00", REPLACEMENT)
    if limit is not None and len(value) > limit:
        value = value[:limit]
    return value


def _has_surrogate(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def identity_storable(value: str, limit: int) -> str:
    """An identifier (a request id) too long for its column keeps its prefix and gains a digest of the
    whole: the same input always maps to the same stored id, so idempotency by id still holds."""
    value = text_storable(value)
    if len(value) <= limit:
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:24]
    return f"{value[: limit - len(digest) - 1]}~{digest}"


def int_storable(value: Any, low: int = BIGINT_MIN, high: int = BIGINT_MAX) -> int:
    """Inside the column's range. A value that is not an integer at all is not clipped into one: TypeError
    (the event is garbage, not merely out of range; metering dead-letters it with that error)."""
    if type(value) is not int:
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return low if value < low else high if value > high else value


def float_storable(value: Any, low: float = 0.0, high: float = math.inf) -> float:
    """A finite float inside [low, high]; anything else (None, NaN, a string) is ``low``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return low
    return float(min(max(value, low), high))


def json_storable(value: Any) -> Any:
    """Every string (keys too) of a JSON value made storable in ``jsonb``; integers kept in 64 bits."""
    if isinstance(value, str):
        return text_storable(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int_storable(int(value))
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {text_storable(str(k)): json_storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_storable(v) for v in value]
    return text_storable(str(value))
