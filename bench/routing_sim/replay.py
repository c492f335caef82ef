"""Replay one workload under one router in virtual time and measure what the callers and the bill saw.

Events are processed in time order: arrivals, and each attempt's outcome at the instant the gateway
learns it (an answer's first byte, an error's arrival), so no router sees the future. The route of a
request is decided at its arrival; a failed attempt moves to the next offering of that order.
"""

from __future__ import annotations

import heapq
import itertools
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.routing_sim.probes import Evaluation
from bench.routing_sim.strategies import MAX_ATTEMPTS, Router, fitting
from bench.routing_sim.workload import Request
from bench.routing_sim.world import World
from contracts.snapshot import CatalogSnapshot, OfferingSnapshot

SLO_TTFT_S = 2.5  # goodput counts requests answered with their first byte within this (docs/routing.md)


@dataclass(slots=True)
class Tally:
    name: str
    requests: int = 0
    ok: int = 0
    rejected: int = 0  # the caller got an error (every attempt failed, none to try, or a cut stream)
    upstream_429: int = 0
    failovers: int = 0
    first_try_failed: int = 0  # requests whose first attempt was refused or failed
    ttft_s: list[float] = field(default_factory=list)
    total_s: float = 0.0  # sum of answered requests' arrival-to-last-byte times
    billed_micros: int = 0
    published_micros: int = 0
    tokens: int = 0  # true input + output of answered requests
    input_tokens: int = 0
    cache_read: int = 0
    lost_to_dishonest_micros: int = 0  # billed above the true usage at the published price
    output_tokens: int = 0  # delivered to callers (answered requests)
    within_slo: int = 0  # answered with the first byte within SLO_TTFT_S
    span_s: float = 1.0  # the seconds the requests arrived over
    per_minute: Counter[tuple[int, int]] = field(default_factory=Counter)  # (offering, minute) -> attempts
    served_by: Counter[str] = field(default_factory=Counter)

    def row(self) -> dict[str, float]:
        ttft = sorted(self.ttft_s)
        q = statistics.quantiles(ttft, n=10) if len(ttft) >= 10 else [float("nan")] * 9
        return {
            "success": self.ok / self.requests,
            "rejected": self.rejected / self.requests,
            "429s": self.upstream_429,
            "failovers": self.failovers,
            "p50": statistics.median(ttft) if ttft else float("nan"),
            "p90": q[8],
            "cost_per_m": self.billed_micros / self.tokens if self.tokens else float("nan"),
            "cache": self.cache_read / self.input_tokens if self.input_tokens else 0.0,
            "lost_usd": self.lost_to_dishonest_micros / 1e6,
            "first_try_failed": self.first_try_failed / self.requests,
            "mean_total_s": self.total_s / self.ok if self.ok else float("nan"),
            "goodput": self.within_slo / self.requests,
            "tok_s": self.output_tokens / self.span_s,
            "cost_usd": self.billed_micros / 1e6,
        }


def load_swing(
    tally: Tally, offerings: dict[int, OfferingSnapshot], by_model: dict[str, list[int]]
) -> tuple[float, float]:
    """(peak RPM use: the busiest offering-minute's attempts / its RPM, mean load swing: per model and
    minute, the spread max - min of the offerings' RPM use), both in %."""
    peak, swings = 0.0, []
    minutes = {m for _, m in tally.per_minute}
    for ids in by_model.values():
        limited = [i for i in ids if offerings[i].rpm]
        if len(limited) < 2:
            continue
        for minute in minutes:
            use = [tally.per_minute[(i, minute)] / offerings[i].rpm for i in limited]  # type: ignore[operator]
            if sum(use) == 0:
                continue
            peak = max(peak, *use)
            swings.append(max(use) - min(use))
    return peak * 100, (statistics.fmean(swings) * 100 if swings else 0.0)


def replay(
    router: Router,
    world: World,
    evaluation: Evaluation,
    catalog: CatalogSnapshot,
    requests: list[Request],
    *,
    on_event: Callable[[], None] | None = None,
) -> Tally:
    by_model: dict[str, tuple[OfferingSnapshot, ...]] = {}

    def publish() -> None:
        current = evaluation.catalog(catalog)
        by_model.clear()
        for o in current.offerings:
            by_model[o.model] = (*by_model.get(o.model, ()), o)
        router.set_catalog(current)

    publish()
    tally, clock, seq = Tally(router.name), world.clock, itertools.count()
    tally.span_s = max(1.0, requests[-1].at - requests[0].at) if requests else 1.0
    events: list[tuple[float, int, Callable[[], None]]] = []

    def advance(to: float) -> None:
        while events and events[0][0] <= to:
            at, _, apply = heapq.heappop(events)
            clock.t = max(clock.t, at)
            apply()
        clock.t = max(clock.t, to)
        if evaluation.changed():
            publish()
        if evaluation.due():
            router.refresh(evaluation.round())

    for request in requests:
        advance(request.at)
        tally.requests += 1
        _one(router, world, request, by_model.get(request.model, ()), tally, events, seq)
    advance(max((e[0] for e in events), default=clock.t))
    return tally


def _one(
    router: Router,
    world: World,
    request: Request,
    offerings: tuple[OfferingSnapshot, ...],
    tally: Tally,
    events: list,
    seq: itertools.count,
) -> None:
    order = router.order(request, fitting(offerings, request))[:MAX_ATTEMPTS]
    start = world.clock.t
    spent = 0.0
    for number, offering in enumerate(order):
        if number:
            tally.failovers += 1
        ticket = router.sent(offering, request)
        live = world.offering(offering.provider, offering.model)
        attempt = world.attempt(live, request.prompt, index=request.index, number=number)
        tally.per_minute[(offering.offering_id, int(start // 60))] += 1
        learned = start + spent + attempt.elapsed_s
        heapq.heappush(
            events, (learned, next(seq), lambda o=offering, a=attempt, t=ticket: router.saw(o, request, a, t))
        )
        spent += attempt.elapsed_s
        if number == 0 and attempt.status != 200:
            tally.first_try_failed += 1
        if attempt.status == 429:
            tally.upstream_429 += 1
        if attempt.status != 200:
            continue
        _answered(router, request, offering, attempt, tally, spent, events, seq, learned)
        return
    tally.rejected += 1


def _answered(
    router: Router,
    request: Request,
    offering: OfferingSnapshot,
    attempt,
    tally: Tally,
    spent: float,
    events: list,
    seq: itertools.count,
    learned: float,
) -> None:
    usage = attempt.usage
    tally.billed_micros += attempt.billed_micros
    tally.published_micros += attempt.published_micros
    tally.lost_to_dishonest_micros += max(0, attempt.billed_micros - attempt.published_micros)
    if attempt.cut:
        tally.rejected += 1  # billed, but the caller got a broken stream
        return
    tally.ok += 1
    tally.ttft_s.append(spent)
    tally.within_slo += spent <= SLO_TTFT_S
    tally.output_tokens += usage.output
    tally.total_s += spent + attempt.generation_s
    tally.tokens += usage.input_total + usage.output
    tally.input_tokens += usage.input_total
    tally.cache_read += usage.cache_read
    tally.served_by[offering.provider] += 1
    heapq.heappush(events, (learned, next(seq), lambda: router.served(offering, request)))
