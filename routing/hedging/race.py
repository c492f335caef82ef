"""Hedged first bytes: when an offering's first byte is later than its measured p95 time to first
token (for this request's size), start the next candidate too and keep whichever answers first.

At most one hedge per call, and only while the tenant's hedge budget lasts (routing.hedging.
budget). With no other candidate left (a model's only offering), the hedge is a second connection to
the same offering: a stalled first byte is usually one stuck request, not the provider. The other attempt is cancelled (its connection closed, so the provider stops) and
booked as a provider-cost-only usage event (end state ``hedge_cancelled``). Before any hedge, and
after a failure, attempts run one after another as plain failover.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from contracts.snapshot import OfferingSnapshot, OfferingStats
from routing.http.errors import UpstreamFailure
from routing.upstream.attempt import Opened

P95_OVER_P90 = 1.25  # TTFTs are right-skewed: p95 ≈ 1.25 × p90 on the fleet's lognormal latencies
P95_OVER_P50 = 2.0  # only the median known
LIVE_MULTIPLE = 1.5  # a provider that is slow right now for everyone is not hedged on every call
PREFILL_MS_PER_TOKEN = 0.02  # prompt reading when evaluation has not measured it (routing.state.priors)
REFERENCE_TOKENS = 1000  # evaluation's headline TTFT is measured on ~1k-token prompts


def p95_ttft_ms(stats: OfferingStats | None, live_ms: float | None, *, input_tokens: int) -> float | None:
    """The offering's p95 time to first token for a prompt of ``input_tokens``; None when unmeasured."""
    p95 = None
    if stats is not None and stats.ttft_p90_ms:
        p95 = stats.ttft_p90_ms * P95_OVER_P90
    elif stats is not None and stats.ttft_p50_ms:
        p95 = stats.ttft_p50_ms * P95_OVER_P50
    if live_ms is not None:
        p95 = max(p95 or 0.0, live_ms * LIVE_MULTIPLE)
    if p95 is None:
        return None
    return p95 + _prefill_ms(stats) * max(0, input_tokens - REFERENCE_TOKENS)


def _prefill_ms(stats: OfferingStats | None) -> float:
    if stats is not None and stats.ttft_10k_p50_ms and stats.ttft_p50_ms:
        return max(0.0, (stats.ttft_10k_p50_ms - stats.ttft_p50_ms) / 9000)
    return PREFILL_MS_PER_TOKEN


@dataclass(slots=True)
class Outcome:
    offering: OfferingSnapshot | None = None  # the winner (None: every attempt failed)
    opened: Opened | None = None
    failure: UpstreamFailure | None = None  # the last failure when there is no winner
    failures: list[UpstreamFailure] = field(default_factory=list)  # every attempt's failure, in order
    losers: list[OfferingSnapshot] = field(default_factory=list)  # hedged attempts cancelled
    hedged: bool = False

    def failed(self, failure: UpstreamFailure) -> None:
        self.failure = failure
        self.failures.append(failure)


Attempt = Callable[[OfferingSnapshot], Awaitable[Opened]]


class HedgedRace:
    """One call's attempts. ``failed`` books a failure and says whether another offering may be tried;
    ``hedge_after`` gives an offering's hedge delay (None: never); ``may_hedge`` spends the budget."""

    def __init__(
        self, attempt: Attempt, *, failed: Callable[[OfferingSnapshot, UpstreamFailure], bool],
        hedge_after: Callable[[OfferingSnapshot], float | None], may_hedge: Callable[[], Awaitable[bool]],
        deadline: float,
    ) -> None:  # fmt: skip
        self._attempt, self._failed, self._hedge_after, self._may_hedge = attempt, failed, hedge_after, may_hedge
        self._deadline = deadline
        self._running: dict[asyncio.Task[Opened], tuple[OfferingSnapshot, float]] = {}

    async def run(self, offerings: list[OfferingSnapshot]) -> Outcome:
        """Plain failover (awaited in place, no task) until an attempt could be hedged; then the race."""
        queue, outcome = list(offerings), Outcome()
        while queue and time.monotonic() < self._deadline:
            offering = queue[0]
            if self._hedge_after(offering) is not None:
                return await self._race(queue, outcome)
            queue.pop(0)
            try:
                opened = await self._attempt(offering)
            except UpstreamFailure as failure:
                outcome.failed(failure)
                if not self._failed(offering, failure):
                    return outcome
                continue
            outcome.offering, outcome.opened = offering, opened
            return outcome
        return outcome

    async def _race(self, queue: list[OfferingSnapshot], outcome: Outcome) -> Outcome:
        try:
            while True:
                if not self._running:
                    if not queue or time.monotonic() >= self._deadline:
                        return outcome
                    self._start(queue.pop(0))
                done, _ = await asyncio.wait(
                    self._running, timeout=self._hedge_wait(queue, outcome), return_when=asyncio.FIRST_COMPLETED
                )
                if not done:  # the first byte is late: one hedge per call, if the budget allows
                    outcome.hedged = True
                    if await self._may_hedge():
                        self._start(queue.pop(0) if queue else self._only_running())
                    continue
                if await self._settle(done, outcome):
                    return outcome
        finally:
            await self._cancel_all(outcome)

    def _start(self, offering: OfferingSnapshot) -> None:
        self._running[asyncio.ensure_future(self._attempt(offering))] = (offering, time.monotonic())

    def _only_running(self) -> OfferingSnapshot:
        """The offering of the one attempt running: the hedge's target when no other candidate is left."""
        [(offering, _)] = self._running.values()
        return offering

    def _hedge_wait(self, queue: list[OfferingSnapshot], outcome: Outcome) -> float | None:
        if outcome.hedged or len(self._running) != 1:
            return None
        [(offering, started)] = self._running.values()
        after = self._hedge_after(offering)
        return None if after is None else max(0.0, started + after - time.monotonic())

    async def _settle(self, done: set[asyncio.Task[Opened]], outcome: Outcome) -> bool:
        """True when the race is over: a winner, or a failure that may not be retried elsewhere."""
        over = False
        for task in done:
            offering, _ = self._running.pop(task)
            error = task.exception()
            if error is None:
                if outcome.opened is None:
                    outcome.offering, outcome.opened = offering, task.result()
                else:  # two first bytes in the same turn: the later one is a loser too
                    task.result().response.close()
                    outcome.losers.append(offering)
                over = True
            elif isinstance(error, UpstreamFailure):
                outcome.failed(error)
                over = over or not self._failed(offering, error)
            else:
                raise error
        return over

    async def _cancel_all(self, outcome: Outcome) -> None:
        """Cancel what still runs (losers, or everything when the caller left) and wait for them to close.
        ``asyncio.wait`` rather than awaiting each: a cancellation of this task itself still propagates."""
        tasks = list(self._running)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        for task in tasks:
            if not task.cancelled() and task.exception() is None:
                task.result().response.close()  # finished between the cancel and now
        if outcome.opened is not None:
            outcome.losers += [offering for offering, _ in (self._running[t] for t in tasks)]
        self._running.clear()
