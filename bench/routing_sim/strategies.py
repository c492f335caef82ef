"""The routers compared. Each orders the candidate offerings (those that fit the request) for one
request and learns from what its attempts saw; every one gets the same failover (the next offering
in its order, up to MAX_ATTEMPTS, as the gateway does).

* random, round-robin: blind orders.
* least-latency: lowest EWMA of observed time to first byte (an unseen offering counts as 0, so
  each is tried once); no notion of errors, limits, price or cache.
* litellm-latency: LiteLLM's latency-based routing as documented and implemented in its
  ``router_strategy/lowest_latency.py``: the average of the last 10 latencies per deployment (TTFT
  for streams), an unseen deployment counts as 0, a failed call adds a 1000 s penalty sample,
  deployments whose own count this minute would pass their configured RPM/TPM are skipped, the
  lowest average wins (buffer 0); plus its router's cooldown (a deployment that returned a 429, or
  failed 3 times within a minute, sits out 5 s). No price, cache or integrity knowledge.
* tokenway:<mode>: the gateway's router itself (``routing.router.route.plan`` with the
  ``DefaultScorer``, the ``HealthBoard`` breaker and live EWMAs, the ``LimitBoard`` of learned
  limits and load forecasts, and cache affinity per conversation) on the evaluation's snapshot.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.routing_sim.workload import Request
from bench.routing_sim.world import REGION, Attempt
from contracts.keyrecord import KeyRecord
from contracts.snapshot import CatalogSnapshot, OfferingSnapshot, StatsSnapshot
from routing.failover.health import HealthBoard
from routing.http.errors import GatewayError
from routing.limits.board import LimitBoard, Ticket
from routing.router.candidates import Need, fits
from routing.router.prefs import ProviderPrefs
from routing.router.route import plan, rate_tokens
from routing.router.strategy import DefaultScorer
from routing.state.offerings import CatalogState

MAX_ATTEMPTS = 3  # routing.process.config.GatewayConfig.max_attempts
RECORD = KeyRecord(key_id=1, tenant_id=1, tenant_slug="bench", name="bench", prefix="p")


def need_of(request: Request) -> Need:
    return Need(input_estimate=request.prompt.tokens, max_tokens=request.max_tokens, params=request.params)


def fitting(offerings: tuple[OfferingSnapshot, ...], request: Request) -> list[OfferingSnapshot]:
    need, prefs = need_of(request), ProviderPrefs()
    strict = [o for o in offerings if fits(o, need, prefs)]
    return strict or [o for o in offerings if fits(o, need, prefs, clamp_output=True)]


@dataclass(slots=True)
class Router:
    name: str
    now: Callable[[], float]

    def order(self, request: Request, pool: list[OfferingSnapshot]) -> list[OfferingSnapshot]:
        raise NotImplementedError

    def sent(self, offering: OfferingSnapshot, request: Request) -> object:
        return None

    def saw(self, offering: OfferingSnapshot, request: Request, attempt: Attempt, ticket: object) -> None:
        """An attempt's outcome, at the instant the gateway would learn it."""

    def served(self, offering: OfferingSnapshot, request: Request) -> None:
        """The request ended on this offering (its answer's last byte)."""

    def refresh(self, stats: StatsSnapshot) -> None:
        """A new evaluation snapshot."""

    def set_catalog(self, catalog: CatalogSnapshot) -> None:
        """A new catalog snapshot (an offering joined, or its integrity probes came in)."""


@dataclass(slots=True)
class RandomRouter(Router):
    rng: random.Random = field(default_factory=lambda: random.Random(7))

    def order(self, request: Request, pool: list[OfferingSnapshot]) -> list[OfferingSnapshot]:
        return self.rng.sample(pool, len(pool))


@dataclass(slots=True)
class RoundRobin(Router):
    turn: dict[str, int] = field(default_factory=dict)

    def order(self, request: Request, pool: list[OfferingSnapshot]) -> list[OfferingSnapshot]:
        k = self.turn.get(request.model, 0)
        self.turn[request.model] = k + 1
        k %= len(pool)
        return pool[k:] + pool[:k]


@dataclass(slots=True)
class LeastLatency(Router):
    ewma: dict[int, float] = field(default_factory=dict)

    def order(self, request: Request, pool: list[OfferingSnapshot]) -> list[OfferingSnapshot]:
        return sorted(pool, key=lambda o: self.ewma.get(o.offering_id, 0.0))

    def saw(self, offering: OfferingSnapshot, request: Request, attempt: Attempt, ticket: object) -> None:
        if attempt.status == 200:
            old = self.ewma.get(offering.offering_id)
            self.ewma[offering.offering_id] = (
                attempt.elapsed_s if old is None else old + 0.2 * (attempt.elapsed_s - old)
            )


LITELLM_SAMPLES = 10
LITELLM_FAIL_PENALTY_S = 1000.0
LITELLM_COOLDOWN_S = 5.0
LITELLM_ALLOWED_FAILS = 3


@dataclass(slots=True)
class LiteLLMLatency(Router):
    latencies: dict[int, deque[float]] = field(default_factory=dict)
    minute: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # id -> (minute, requests, tokens)
    fails: dict[int, deque[float]] = field(default_factory=dict)
    cooled_until: dict[int, float] = field(default_factory=dict)

    def _score(self, o: OfferingSnapshot) -> float:
        samples = self.latencies.get(o.offering_id)
        return sum(samples) / len(samples) if samples else 0.0

    def _within_limits(self, o: OfferingSnapshot, tokens: int) -> bool:
        minute, requests, used = self.minute.get(o.offering_id, (-1, 0, 0))
        if minute != int(self.now() // 60):
            requests, used = 0, 0
        return not ((o.rpm is not None and requests + 1 > o.rpm) or (o.tpm is not None and used + tokens > o.tpm))

    def order(self, request: Request, pool: list[OfferingSnapshot]) -> list[OfferingSnapshot]:
        now, tokens = self.now(), request.prompt.tokens
        ready = [o for o in pool if self.cooled_until.get(o.offering_id, 0.0) <= now] or pool
        allowed = [o for o in ready if self._within_limits(o, tokens)] or ready
        return sorted(allowed, key=self._score)

    def _sample(self, offering_id: int, value: float) -> None:
        self.latencies.setdefault(offering_id, deque(maxlen=LITELLM_SAMPLES)).append(value)

    def saw(self, offering: OfferingSnapshot, request: Request, attempt: Attempt, ticket: object) -> None:
        oid, now = offering.offering_id, self.now()
        if attempt.status == 200:
            self._sample(oid, attempt.elapsed_s)
            minute, requests, used = self.minute.get(oid, (-1, 0, 0))
            if minute != int(now // 60):
                minute, requests, used = int(now // 60), 0, 0
            usage = attempt.usage
            self.minute[oid] = (minute, requests + 1, used + (usage.input_total + usage.output if usage else 0))
            return
        self._sample(oid, LITELLM_FAIL_PENALTY_S)
        fails = self.fails.setdefault(oid, deque())
        fails.append(now)
        while fails and fails[0] < now - 60:
            fails.popleft()
        if attempt.status == 429 or len(fails) >= LITELLM_ALLOWED_FAILS:
            self.cooled_until[oid] = now + LITELLM_COOLDOWN_S


@dataclass(slots=True)
class Tokenway(Router):
    mode: str = "balanced"
    state: CatalogState = field(default_factory=lambda: CatalogState(REGION))
    health: HealthBoard | None = None
    limits: LimitBoard | None = None
    affinity: dict[str, tuple[int, float]] = field(default_factory=dict)  # session -> (offering, until)
    scorer: DefaultScorer = field(default_factory=DefaultScorer)

    def setup(self, catalog: CatalogSnapshot) -> Tokenway:
        self.state.set_catalog(catalog)
        self.health = HealthBoard(failures_to_open=3, cooldown_s=15.0, clock=self.now)
        self.limits = LimitBoard(clock=self.now)
        return self

    def refresh(self, stats: StatsSnapshot) -> None:
        self.state.set_stats(stats)

    def set_catalog(self, catalog: CatalogSnapshot) -> None:
        self.state.set_catalog(catalog)

    def _affinity(self, request: Request) -> int | None:
        if request.session is None:
            return None
        found = self.affinity.get(request.session)
        return found[0] if found and found[1] > self.now() else None

    def order(self, request: Request, pool: list[OfferingSnapshot]) -> list[OfferingSnapshot]:
        assert self.health is not None
        try:
            route = plan(
                state=self.state,
                health=self.health,
                strategy=self.scorer,
                record=RECORD,
                model=request.model,
                need=need_of(request),
                prefs=ProviderPrefs(),
                mode=self.mode,
                affinity=self._affinity(request),
                limits=self.limits,
            )
        except GatewayError:
            return []  # every candidate cooling down: the gateway answers 503 at once
        return route.offerings

    def sent(self, offering: OfferingSnapshot, request: Request) -> object:
        assert self.health is not None and self.limits is not None
        self.health.begin(offering.offering_id)
        return self.limits.sent(offering.offering_id, rate_tokens(need_of(request)))

    def saw(self, offering: OfferingSnapshot, request: Request, attempt: Attempt, ticket: object) -> None:
        assert self.health is not None and self.limits is not None and isinstance(ticket, Ticket)
        if attempt.status == 200:
            self.health.success(offering.offering_id, attempt.elapsed_s * 1000)
            self.limits.finished(ticket, attempt.headers)
        elif attempt.status == 429:
            self.health.failure(offering.offering_id, retry_after=attempt.retry_after_s, throttled=True)
            self.limits.throttled(ticket, attempt.retry_after_s or 1.0)
        else:
            self.health.failure(offering.offering_id, retry_after=attempt.retry_after_s)
            self.limits.finished(ticket, attempt.headers)

    def served(self, offering: OfferingSnapshot, request: Request) -> None:
        if request.session is not None:
            self.affinity[request.session] = (offering.offering_id, self.now() + offering.cache_ttl_s)


BASELINES: dict[str, Callable[[Callable[[], float]], Router]] = {
    "random": lambda now: RandomRouter("random", now),
    "round-robin": lambda now: RoundRobin("round-robin", now),
    "least-latency": lambda now: LeastLatency("least-latency", now),
    "litellm-latency": lambda now: LiteLLMLatency("litellm-latency", now),
}
MODES = ("balanced", "cost", "performance", "quality")
