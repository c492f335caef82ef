"""How long one offering may take to its first byte before the call moves on to the next.

Derived from what the evaluations measured for it (contracts.snapshot.OfferingStats):
three times its p90 time to first token, never under a floor (a quick provider's p90
says little about one slow request), plus time to read a long prompt, capped by the
configured first-token timeout. Without statistics, a conservative default.
"""

from __future__ import annotations

from contracts.snapshot import OfferingStats

TTFT_MULTIPLE = 3.0  # a healthy provider rarely takes 3x its p90 to start
P50_MULTIPLE = 6.0  # only the median known: p90 is typically within 2x of it
FLOOR_S = 2.0  # never abandon sooner than this, whatever the statistics say
NO_STATS_S = 10.0  # an offering the evaluations have not measured yet
PREFILL_FLOOR_TPS = 2_000.0  # slowest prompt reading we wait for: a 100k-token prompt adds 50 s


def first_byte_deadline_s(stats: OfferingStats | None, *, input_tokens: int, cap_s: float) -> float:
    return min(_measured_s(stats) + input_tokens / PREFILL_FLOOR_TPS, cap_s)


def _measured_s(stats: OfferingStats | None) -> float:
    if stats is not None and stats.ttft_p90_ms:
        return max(TTFT_MULTIPLE * stats.ttft_p90_ms / 1000, FLOOR_S)
    if stats is not None and stats.ttft_p50_ms:
        return max(P50_MULTIPLE * stats.ttft_p50_ms / 1000, FLOOR_S)
    return NO_STATS_S
