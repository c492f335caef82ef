"""Response headers: request ids and rate-limit headers in the provider's style."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

from sim.ratelimit import Admission


def go_duration(seconds: float) -> str:
    """OpenAI's reset format: 120ms, 1s, 6m0s."""
    if seconds < 1:
        return f"{max(1, round(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.0f}s" if minutes else f"{rest:.3g}s"


def openai_limits(admission: Admission, real_reset_s: float) -> dict[str, str]:
    headers: dict[str, str] = {}
    if admission.limit_requests is not None:
        headers["x-ratelimit-limit-requests"] = str(admission.limit_requests)
        headers["x-ratelimit-remaining-requests"] = str(admission.remaining_requests)
        headers["x-ratelimit-reset-requests"] = go_duration(real_reset_s)
    if admission.limit_tokens is not None:
        headers["x-ratelimit-limit-tokens"] = str(admission.limit_tokens)
        headers["x-ratelimit-remaining-tokens"] = str(admission.remaining_tokens)
        headers["x-ratelimit-reset-tokens"] = go_duration(real_reset_s)
    return headers


def anthropic_limits(admission: Admission, real_reset_s: float) -> dict[str, str]:
    reset = datetime.fromtimestamp(time.time() + real_reset_s, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    headers: dict[str, str] = {}
    if admission.limit_requests is not None:
        headers["anthropic-ratelimit-requests-limit"] = str(admission.limit_requests)
        headers["anthropic-ratelimit-requests-remaining"] = str(admission.remaining_requests)
        headers["anthropic-ratelimit-requests-reset"] = reset
    if admission.limit_tokens is not None:
        for kind in ("tokens", "input-tokens", "output-tokens"):
            headers[f"anthropic-ratelimit-{kind}-limit"] = str(admission.limit_tokens)
            headers[f"anthropic-ratelimit-{kind}-remaining"] = str(admission.remaining_tokens)
            headers[f"anthropic-ratelimit-{kind}-reset"] = reset
    return headers


def limit_headers(style: str, admission: Admission | None, real_reset_s: float) -> dict[str, str]:
    if admission is None or style == "none":
        return {}
    return anthropic_limits(admission, real_reset_s) if style == "anthropic" else openai_limits(admission, real_reset_s)


def retry_after(real_seconds: float) -> dict[str, str]:
    return {
        "retry-after": str(max(1, math.ceil(real_seconds))),
        "retry-after-ms": str(max(1, round(real_seconds * 1000))),
    }
