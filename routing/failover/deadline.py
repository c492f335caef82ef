"""How long one offering may take to its first byte before the call moves on to the next.

Derived from what the evaluations measured for it (contracts.snapshot.OfferingStats):
three times its p90 time to first token, never under a floor (a quick provider's p90
says little about one slow request), plus time to read a long prompt, capped by the
configured first-token timeout. Without statistics, a conservative default. A half-open breaker's
trial gets at most twice the median instead: a slowdown's samples reach the p90 first, and a trial
that is still slow must fail over (and keep the breaker open) rather than count as a recovery.
"""

from __future__ import annotations

from contracts.snapshot import OfferingStats

TTFT_MULTIPLE = 3.0  # a healthy provider rarely takes 3x its p90 to start
P50_MULTIPLE = 6.0  # only the median known: p90 is typically within 2x of it
FLOOR_S = 2.0  # never abandon sooner than this, whatever the statistics say
NO_STATS_S = 10.0  # an offering the evaluations have not measured yet
PREFILL_FLOOR_TPS = 2_000.0  # slowest prompt reading we wait for: a 100k-token prompt adds 50 s
# A trial's first token later than twice the median: still slow. A healthy trial (TTFT sigma 0.3-0.45)
# passes 94-99% of the time, and failing one wrongly costs one more cooldown; passing a slow one wrongly
# would let a slow offering back (a 6x slow one passes about once in 8,000 trials at sigma 0.3).
TRIAL_P50_MULTIPLE = 2.0


def first_byte_deadline_s(stats: OfferingStats | None, *, input_tokens: int, cap_s: float) -> float:
    return min(_measured_s(stats) + input_tokens / PREFILL_FLOOR_TPS, cap_s)


def trial_first_byte_deadline_s(stats: OfferingStats | None, *, input_tokens: int, cap_s: float) -> float:
    normal = first_byte_deadline_s(stats, input_tokens=input_tokens, cap_s=cap_s)
    if stats is None or not stats.ttft_p50_ms:
        return normal
    return min(normal, max(TRIAL_P50_MULTIPLE * stats.ttft_p50_ms / 1000, FLOOR_S) + input_tokens / PREFILL_FLOOR_TPS)


def _measured_s(stats: OfferingStats | None) -> float:
    if stats is not None and stats.ttft_p90_ms:
        return max(TTFT_MULTIPLE * stats.ttft_p90_ms / 1000, FLOOR_S)
    if stats is not None and stats.ttft_p50_ms:
        return max(P50_MULTIPLE * stats.ttft_p50_ms / 1000, FLOOR_S)
    return NO_STATS_S
