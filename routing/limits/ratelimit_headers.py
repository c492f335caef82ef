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
    parts = _DURATION.findall(raw.strip())
    if not parts or "".join(n + u for n, u in parts) != raw.strip():
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


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


def parse(headers: Mapping[str, str], *, now: float | None = None) -> LimitHeaders:
    """Either dialect's headers (names lower-case or as sent; aiohttp's are case-insensitive)."""
    if headers.get("x-ratelimit-remaining-requests") is not None or headers.get("x-ratelimit-remaining-tokens"):
        return LimitHeaders(
            _int(headers, "x-ratelimit-limit-requests"),
            _int(headers, "x-ratelimit-remaining-requests"),
            _int(headers, "x-ratelimit-limit-tokens"),
            _int(headers, "x-ratelimit-remaining-tokens"),
            _latest(*(go_duration_s(headers.get(f"x-ratelimit-reset-{k}", "")) for k in ("requests", "tokens"))),
        )
    if headers.get("anthropic-ratelimit-requests-remaining") is not None or headers.get(
        "anthropic-ratelimit-tokens-remaining"
    ):
        at = time.time() if now is None else now
        resets = (headers.get(f"anthropic-ratelimit-{k}-reset") for k in ("requests", "tokens"))
        return LimitHeaders(
            _int(headers, "anthropic-ratelimit-requests-limit"),
            _int(headers, "anthropic-ratelimit-requests-remaining"),
            _int(headers, "anthropic-ratelimit-tokens-limit"),
            _int(headers, "anthropic-ratelimit-tokens-remaining"),
            _latest(*(instant_in_s(r, at) for r in resets if r)),
        )
    return NONE
