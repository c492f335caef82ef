"""What the forwarder needs to hedge a call and to learn limits from its attempts (docs/routing.md).

``Hedging``: the hedge delay of an offering (its p95 TTFT for this request, never under a floor),
the tenant's budget, and booking the cancelled attempts. ``tracked``: one attempt with its send,
headers and 429 recorded on the limit board.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from contracts.snapshot import OfferingSnapshot, OfferingStats
from contracts.usage import UsageEvent
from routing.handoff.call import Call
from routing.handoff.emit import submit_event
from routing.hedging.budget import HEDGE_BURST, HEDGE_SHARE, spend_hedge
from routing.hedging.loser import loser_event
from routing.hedging.race import p95_ttft_ms
from routing.http.errors import UpstreamFailure
from routing.limits.board import LimitBoard
from routing.limits.ratelimit_headers import parse
from routing.redis.pipe import PipelinedRedis, RedisUnavailable
from routing.upstream.attempt import Opened
from routing.upstream.classify import DEFAULT_429_COOLDOWN_S, passed_over

log = logging.getLogger("routing.hedge")

HEDGE_FLOOR_S = 0.25  # never hedge sooner: below this, network jitter alone would trigger hedges
EXPECTED_OUTPUT_TOKENS = 256  # what a provider's TPM window counts without max_tokens (routing.router.route)


@dataclass(slots=True)
class Hedging:
    redis: PipelinedRedis
    region: str
    generation_ttl_s: int
    spool: Callable[[UsageEvent], None]  # where a loser's event goes when Redis does not take it
    share: float = HEDGE_SHARE
    burst: float = HEDGE_BURST
    floor_s: float = HEDGE_FLOOR_S
    counts: dict[str, int] = field(default_factory=lambda: {"late": 0, "hedged": 0, "cancelled": 0})

    def after_s(self, call: Call, stats: OfferingStats | None, live_ms: float | None) -> float | None:
        """Seconds to wait for ``offering``'s first byte before hedging; None: do not hedge this call.
        Streams only: a whole answer's first byte comes after its generation, not after its TTFT."""
        if not call.view.stream or self.share <= 0:
            return None
        p95 = p95_ttft_ms(stats, live_ms, input_tokens=call.view.input_estimate)
        return None if p95 is None else max(self.floor_s, p95 / 1000)

    async def may_hedge(self, call: Call) -> bool:
        self.counts["late"] += 1
        spent = await spend_hedge(self.redis, call.admission, share=self.share, burst=self.burst)
        self.counts["hedged"] += int(spent)
        if spent:
            call.route_reason += "+hedge"
        return spent

    async def book(self, call: Call, losers: list[OfferingSnapshot]) -> None:
        """One provider-cost-only event per cancelled attempt."""
        for offering in losers:
            self.counts["cancelled"] += 1
            event = loser_event(call, offering, self.region)
            try:
                await asyncio.gather(*submit_event(self.redis, event, self.generation_ttl_s))
            except (RedisUnavailable, OSError) as exc:
                log.warning("hedge loser event of %s spooled: %s", call.request_id, exc)
                self.spool(event)


async def tracked(
    limits: LimitBoard | None, call: Call, offering: OfferingSnapshot, attempt: Coroutine[Any, Any, Opened],
    *, fallback: bool,
) -> Opened:  # fmt: skip
    """``attempt`` with its send, its rate-limit headers and a 429 recorded for ``offering`` (not for a
    tenant's own key: its limits are not the platform's). With a ``fallback`` left, an offering whose
    room concurrent calls took since the route was planned is passed over: checked and counted in one
    step, so no two calls spend the same last request."""
    if limits is None or call.record.byok.get(offering.provider):
        return await attempt
    tokens = call.view.input_estimate + (call.view.max_tokens or EXPECTED_OUTPUT_TOKENS)
    if fallback and limits.gone(offering, tokens):
        attempt.close()
        raise passed_over()
    ticket = limits.sent(offering.offering_id, tokens)
    try:
        opened = await attempt
    except UpstreamFailure as exc:
        if exc.kind == "http_429":
            limits.throttled(ticket, exc.retry_after or DEFAULT_429_COOLDOWN_S)
        else:
            limits.finished(ticket, None)
        raise
    except BaseException:
        limits.finished(ticket, None)
        raise
    limits.finished(ticket, parse(opened.response.headers) if limits.wants_headers(ticket) else None)
    return opened
