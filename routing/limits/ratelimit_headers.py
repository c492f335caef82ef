"""What a provider's rate-limit response headers say: requests and tokens left, and when they refill.

Two dialects: OpenAI-style ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` (reset as a
Go duration: ``120ms``, ``1s``, ``6m0s``) and Anthropic-style
``anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`` (reset as an RFC 3339 instant).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
MAX_RESET_S = 3600.0  # a reset further out than this is not believed (a clock skew or a typo)


@dataclass(frozen=True, slots=True)
class LimitHeaders:
    """One response's view of the provider's window (None: the header was absent or unreadable)."""

    limit_requests: int | None = None
    remaining_requests: int | None = None
    limit_tokens: int | None = None
    remaining_tokens: int | None = None
    reset_s: float | None = None  # seconds from now until the window refills (the later of the two)

    @property
    def empty(self) -> bool:
        return self.remaining_requests is None and self.remaining_tokens is None


NONE = LimitHeaders()


def go_duration_s(raw: str) -> float | None:
    """``6m0s`` → 360.0; ``120ms`` → 0.12; None when it is not a duration."""
    simple = _simple_duration_s(raw)
    if simple is not None:
        return simple
    parts = _DURATION.findall(raw.strip())
    if not parts or "".join(n + u for n, u in parts) != raw.strip():
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def _simple_duration_s(raw: str) -> float | None:
    """The common one-unit forms (``12s``, ``1.5s``, ``120ms``) without the regex: every answer has them."""
    number, scale = (raw[:-2], 0.001) if raw.endswith("ms") else (raw[:-1], 1.0) if raw.endswith("s") else ("", 0)
    if not number or not number.replace(".", "", 1).isdigit():
        return None
    return float(number) * scale


def instant_in_s(raw: str, now: float) -> float | None:
    """An RFC 3339 instant as seconds from ``now`` (epoch)."""
    try:
        return datetime.fromisoformat(raw.strip().replace("Z", "+00:00")).timestamp() - now
    except ValueError:
        return None


def _int(headers: Mapping[str, str], name: str) -> int | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        return max(0, int(float(raw)))
    except ValueError:
        return None


def _latest(*values: float | None) -> float | None:
    known = [min(max(v, 0.0), MAX_RESET_S) for v in values if v is not None]
    return max(known) if known else None


def _relevant(headers: Mapping[str, str]) -> dict[str, str]:
    """The rate-limit headers only, names lower-cased: one pass over a response's headers is cheaper
    than a dozen case-insensitive lookups (this runs on every answer)."""
    out = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower.startswith(("x-ratelimit-", "anthropic-ratelimit-")):
            out[lower] = value
    return out


def parse(headers: Mapping[str, str], *, now: float | None = None) -> LimitHeaders:
    """Either dialect's headers (any case)."""
    found = _relevant(headers)
    if not found:
        return NONE
    if "x-ratelimit-remaining-requests" in found or "x-ratelimit-remaining-tokens" in found:
        return LimitHeaders(
            _int(found, "x-ratelimit-limit-requests"),
            _int(found, "x-ratelimit-remaining-requests"),
            _int(found, "x-ratelimit-limit-tokens"),
            _int(found, "x-ratelimit-remaining-tokens"),
            _latest(*(go_duration_s(found.get(f"x-ratelimit-reset-{k}", "")) for k in ("requests", "tokens"))),
        )
    if "anthropic-ratelimit-requests-remaining" in found or "anthropic-ratelimit-tokens-remaining" in found:
        at = time.time() if now is None else now
        resets = (found.get(f"anthropic-ratelimit-{k}-reset") for k in ("requests", "tokens"))
        return LimitHeaders(
            _int(found, "anthropic-ratelimit-requests-limit"),
            _int(found, "anthropic-ratelimit-requests-remaining"),
            _int(found, "anthropic-ratelimit-tokens-limit"),
            _int(found, "anthropic-ratelimit-tokens-remaining"),
            _latest(*(instant_in_s(r, at) for r in resets if r)),
        )
    return NONE
