"""Is billing keeping up, and is anything set aside? What /healthz, /metrics and ``reconcile`` show of
the usage pipeline (docs/operations.md names the alerts).

- dead letters waiting (metering.dead_letters): an event that could not be booked, until replayed;
- stuck entries: taken by a consumer and not acknowledged for ``STUCK_AFTER_S`` (a consumer that
  died or cannot commit; the survivors claim them after ``CLAIM_MIN_IDLE_MS``);
- pending age: the oldest event not yet in the ledger; consumer lag: events no consumer took yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis

from contracts.redis_keys import USAGE_GROUP, usage_shard_count_from_env, usage_streams
from metering.dead_letters import dead_letters_total, dead_letters_waiting
from metering.lag import lag_total, usage_lag_by_stream

# Billing is "behind" past this: the gateway's hand-off takes milliseconds and a batch well under a second,
# so a minute means consumers are down or failing (the same grace reconcile gives a finished request).
BEHIND_AFTER_S = 60.0
# An entry delivered and unacknowledged this long is stuck: four times the dead consumer's claim idle time.
STUCK_AFTER_S = 60.0
STUCK_COUNT_BOUND = 1_000  # pending entries examined per shard; the count saturates there


@dataclass(frozen=True, slots=True)
class PipelineState:
    dead_letters: int  # waiting for a replay
    dead_lettered_total: int  # ever set aside
    stuck: int
    pending: int
    undelivered: int
    oldest_unbilled_s: float

    @property
    def problems(self) -> list[str]:
        found = []
        if self.dead_letters:
            found.append(f"{self.dead_letters} usage event(s) dead-lettered (python manage.py usage_dead_letters list)")
        if self.stuck:
            found.append(f"{self.stuck} usage event(s) stuck unacknowledged over {STUCK_AFTER_S:.0f}s")
        if self.oldest_unbilled_s > BEHIND_AFTER_S:
            found.append(f"billing {self.oldest_unbilled_s:.0f}s behind ({self.undelivered} not yet taken)")
        return found

    def as_dict(self) -> dict[str, Any]:
        return {
            "dead_letters": self.dead_letters,
            "dead_lettered_total": self.dead_lettered_total,
            "stuck": self.stuck,
            "pending": self.pending,
            "undelivered": self.undelivered,
            "oldest_unbilled_s": round(self.oldest_unbilled_s, 3),
        }


def usage_pipeline_state(client: redis.Redis, streams: list[str] | None = None) -> PipelineState:
    names = usage_streams(usage_shard_count_from_env()) if streams is None else streams
    lag = lag_total(usage_lag_by_stream(client, names))
    stuck = sum(_stuck(client, stream) for stream in names) if lag.pending else 0
    return PipelineState(
        dead_letters=dead_letters_waiting(client),
        dead_lettered_total=dead_letters_total(client),
        stuck=stuck,
        pending=lag.pending,
        undelivered=lag.undelivered,
        oldest_unbilled_s=lag.oldest_unbilled_s,
    )


def _stuck(client: redis.Redis, stream: str) -> int:
    """Entries idle in a consumer's pending list longer than ``STUCK_AFTER_S`` (XPENDING IDLE, Redis 6.2)."""
    try:
        rows: Any = client.xpending_range(
            stream, USAGE_GROUP, min="-", max="+", count=STUCK_COUNT_BOUND, idle=int(STUCK_AFTER_S * 1000)
        )
    except redis.ResponseError:  # no group yet: nothing was ever delivered
        return 0
    return len(rows)
