"""Each offering's learned rate limits and forecast load, in this process (shared by limits.shared).

What is left of an offering's window comes, in order of trust, from:

1. its last rate-limit headers (``remaining`` when that request was sent) minus every request we
   sent after that one (a send sequence number per offering: a request sent later may not be
   counted in the provider's figure, so it is subtracted; double counting errs on the safe side);
2. a 429: nothing left until its ``Retry-After``;
3. once the window has refilled, or before any header: the limit (the header's, else the catalog's
   declared RPM/TPM, the prior) minus what we sent since the refill (or in the last 60 s).

The router asks ``assess``: ``exhausted`` (this request would be refused: skipped unless nothing
else is left) and a ``penalty`` in score units once the Holt forecast of the next ``HORIZON_S``
seconds' requests nears what is left (route away before the cliff, not after a 429).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from contracts.snapshot import OfferingSnapshot
from routing.limits.forecast import Holt
from routing.limits.ratelimit_headers import LimitHeaders

WINDOW_S = 60  # providers' RPM/TPM windows; the prior's sliding window
HORIZON_S = 15.0  # forecast window: far enough to leave before the cliff, near enough to be right
DEMOTE_FROM = 0.7  # forecast ÷ what is left where demotion starts
FULL_AT = 1.2  # ... and where it is full
REREAD_EVERY = 16  # far from the limit, headers are read from one answer in this many
ROOMY_REQUESTS = 100  # ... when more than this many requests, and a quarter of the limit, are left
ROOMY_SHARE = 0.25
SAME_WINDOW_S = 2.0  # two answers whose refill instants are this close describe the same window
LOAD_PENALTY = 3.0  # score units at full demotion (an error share of 1, or 3+ price doublings)


@dataclass(frozen=True, slots=True)
class Ticket:
    """One request sent: its place in the offering's send order (for its response's headers)."""

    offering_id: int
    seq: int
    tokens_before: int


@dataclass(frozen=True, slots=True)
class Assessment:
    exhausted: bool = False
    penalty: float = 0.0
    requests_left: float | None = None
    forecast: float = 0.0  # requests expected within the horizon
    tokens_left: float | None = None


CLEAR = Assessment()
CACHE_PER_S = 10  # an offering's figures are recomputed at most every 0.1 s unless a send or a header moved them


@dataclass(slots=True)
class OfferingLoad:
    seq: int = 0  # requests sent by this process (plus others' as learned at each sync)
    tokens_sent: int = 0
    flying: set[int] = field(default_factory=set)  # send numbers of our attempts awaiting their first byte
    second: int = 0  # the second ``count`` belongs to
    count: int = 0
    holt: Holt = field(default_factory=Holt)
    ring: list[tuple[int, int, int]] = field(default_factory=list)  # (second, requests, tokens), last WINDOW_S
    # The provider's last word: remaining at the send ``seen_seq`` / ``seen_tokens``, until ``reset_at``.
    seen_at: float = 0.0
    seen_seq: int = 0
    seen_tokens: int = 0
    left_requests: int | None = None
    left_tokens: int | None = None
    limit_requests: int | None = None
    limit_tokens: int | None = None
    reset_at: float = 0.0
    pending_requests: int = 0  # not yet shared
    pending_tokens: int = 0
    pending_seen: bool = False
    shared_requests: int = 0  # the all-process counters at the last sync (limits.shared)
    shared_tokens: int = 0
    shared_seen: bool = False
    version: int = 0  # bumped by every send and every observation taken (the cache's key)
    cache_key: tuple[int, int] = (-1, 0)  # (version, tenth of a second)
    cache: Assessment = CLEAR


class LimitBoard:
    def __init__(self, *, clock: Callable[[], float] = time.time, enabled: bool = True) -> None:
        self._clock = clock  # epoch seconds: stamps are shared with other processes (limits.shared)
        self.enabled = enabled  # off: tracked but never used to route (the comparison in the tests)
        self._by_offering: dict[int, OfferingLoad] = {}
        self.generation = 0  # bumped by reset: a sync in flight across it must not write into the new state

    def set_clock(self, clock: Callable[[], float]) -> None:
        self._clock = clock

    def now(self) -> float:
        return self._clock()

    def get(self, offering_id: int) -> OfferingLoad:
        load = self._by_offering.get(offering_id)
        if load is None:
            load = self._by_offering[offering_id] = OfferingLoad(second=int(self._clock()))
        return load

    def items(self) -> list[tuple[int, OfferingLoad]]:
        return list(self._by_offering.items())

    def reset(self) -> None:
        self._by_offering.clear()
        self.generation += 1

    # -- what happened ---------------------------------------------------------------------------

    def sent(self, offering_id: int, tokens: int) -> Ticket:
        load = self.get(offering_id)
        ticket = Ticket(offering_id, load.seq, load.tokens_sent)
        self.count(load, 1, tokens)
        load.flying.add(ticket.seq)
        load.pending_requests += 1
        load.pending_tokens += tokens
        return ticket

    def count(self, load: OfferingLoad, requests: int, tokens: int) -> None:
        """Requests sent now (ours, or other processes' learned at a sync)."""
        self._roll(load)
        load.version += 1
        load.seq += requests
        load.tokens_sent += tokens
        load.count += requests
        if load.ring and load.ring[-1][0] == load.second:
            _, r, t = load.ring[-1]
            load.ring[-1] = (load.second, r + requests, t + tokens)
        else:
            load.ring.append((load.second, requests, tokens))

    def finished(self, ticket: Ticket, headers: LimitHeaders | None) -> None:
        """The attempt of ``ticket`` ended (answered, failed, cancelled) with these headers, if any."""
        load = self.get(ticket.offering_id)
        load.flying.discard(ticket.seq)
        if headers is None or headers.empty or ticket.seq + 1 < load.seen_seq:
            return  # an older request's view: what we know already is newer
        now = self._clock()
        reset_at = now + (headers.reset_s if headers.reset_s is not None else WINDOW_S)
        # Sent before this one but still unanswered: they may reach the provider after it (another
        # connection), so its figure may not count them yet. Counted as spent: the safe side.
        older = sum(1 for seq in load.flying if seq < ticket.seq)
        remaining = None if headers.remaining_requests is None else headers.remaining_requests - older
        left_now = None if remaining is None else remaining - (load.seq - ticket.seq - 1)
        if left_now is not None and self._same_window(load, now, reset_at):
            known, _, _ = self._left_in_window(load)
            if known is not None and known < left_now:  # within one window what is left only shrinks:
                return  # a request answered before an older one may not count it (it arrived first)
        load.seen_at, load.seen_seq, load.seen_tokens = now, ticket.seq + 1, ticket.tokens_before
        load.left_requests, load.left_tokens = remaining, headers.remaining_tokens
        load.limit_requests = headers.limit_requests or load.limit_requests
        load.limit_tokens = headers.limit_tokens or load.limit_tokens
        load.reset_at = reset_at
        load.pending_seen = True
        load.version += 1

    @staticmethod
    def _same_window(load: OfferingLoad, now: float, reset_at: float) -> bool:
        return bool(load.seen_at) and now < load.reset_at and reset_at < load.reset_at + SAME_WINDOW_S

    @staticmethod
    def _left_in_window(load: OfferingLoad) -> tuple[int | None, int | None, float]:
        requests = None if load.left_requests is None else load.left_requests - (load.seq - load.seen_seq)
        tokens = None if load.left_tokens is None else load.left_tokens - (load.tokens_sent - load.seen_tokens)
        return requests, tokens, load.reset_at

    def wants_headers(self, ticket: Ticket) -> bool:
        """Whether an answer's rate-limit headers are worth reading (~15 µs): always near the limit, at
        the first answer and after a refill; far from it one answer in ``REREAD_EVERY`` is enough, as
        our own send count keeps the estimate on the safe side in between."""
        load = self._by_offering.get(ticket.offering_id)
        if load is None or not load.seen_at or self._clock() >= load.reset_at or ticket.seq % REREAD_EVERY == 0:
            return True
        requests, tokens, _ = self._left_in_window(load)
        tight = requests is not None and requests < max(ROOMY_REQUESTS, (load.limit_requests or 0) * ROOMY_SHARE)
        return tight or (tokens is not None and tokens < (load.limit_tokens or 0) * ROOMY_SHARE)

    def throttled(self, ticket: Ticket, retry_after_s: float) -> None:
        """A 429: nothing left until ``Retry-After`` whatever the last headers said."""
        load = self.get(ticket.offering_id)
        load.flying.discard(ticket.seq)
        now = self._clock()
        load.seen_at, load.seen_seq, load.seen_tokens = now, load.seq, load.tokens_sent
        load.left_requests, load.left_tokens = 0, None
        load.reset_at = now + retry_after_s
        load.pending_seen = True
        load.version += 1

    # -- what the router reads -------------------------------------------------------------------

    def assess(self, offering: OfferingSnapshot, tokens: int) -> Assessment:
        return self.assess_all([offering], tokens)[0]

    def gone(self, offering: OfferingSnapshot, tokens: int) -> bool:
        """At the send: whether this request would now be refused (``assess``'s ``exhausted``, without the
        forecast). The router's picture is an await old (admission's round trip) and concurrent calls
        may have taken the room it saw since."""
        load = self._by_offering.get(offering.offering_id)
        if not self.enabled or load is None:
            return False
        requests, tokens_left, _ = self._left(load, offering, self._clock())
        return (requests is not None and requests < 1) or (tokens_left is not None and tokens_left < tokens)

    def assess_all(self, offerings: list[OfferingSnapshot], tokens: int) -> list[Assessment]:
        """One clock read for all candidates; an offering's figures are cached until it sends or learns
        something, or for a tenth of a second (this runs for every candidate of every request)."""
        if not self.enabled:
            return [CLEAR] * len(offerings)
        tick = int(self._clock() * CACHE_PER_S)
        out = []
        for offering in offerings:
            load = self._by_offering.get(offering.offering_id)
            if load is None:
                out.append(CLEAR)
                continue
            if load.cache_key != (load.version, tick):
                load.cache_key, load.cache = (load.version, tick), self._assessment(load, offering)
            cached = load.cache
            if not cached.exhausted and cached.tokens_left is not None and cached.tokens_left < tokens:
                cached = Assessment(True, LOAD_PENALTY, cached.requests_left, cached.forecast, cached.tokens_left)
            out.append(cached)
        return out

    def _assessment(self, load: OfferingLoad, offering: OfferingSnapshot) -> Assessment:
        """What is left of one offering's window, the forecast, the demotion (no request's size yet)."""
        self._roll(load)
        requests_left, tokens_left, window_s = self._left(load, offering, self._clock())
        if requests_left is not None and requests_left < 1:
            return Assessment(True, LOAD_PENALTY, requests_left, 0.0, tokens_left)
        forecast = load.holt.over(min(HORIZON_S, window_s))
        ratio = 0.0 if requests_left is None else forecast / requests_left
        if tokens_left is not None and load.seq:
            ratio = max(ratio, forecast * load.tokens_sent / load.seq / max(tokens_left, 1))
        share = min(1.0, max(0.0, (ratio - DEMOTE_FROM) / (FULL_AT - DEMOTE_FROM)))
        return Assessment(False, LOAD_PENALTY * share, requests_left, forecast, tokens_left)

    def _left(
        self, load: OfferingLoad, offering: OfferingSnapshot, now: float
    ) -> tuple[float | None, float | None, float]:
        """(requests left, tokens left, seconds until they refill) — None where nothing limits."""
        if load.seen_at and now < load.reset_at:
            requests, tokens, reset_at = self._left_in_window(load)
            return requests, tokens, reset_at - now
        since = load.reset_at if load.seen_at else now - WINDOW_S
        sent_requests, sent_tokens = _sent_since(load, since)
        rpm, tpm = load.limit_requests or offering.rpm, load.limit_tokens or offering.tpm
        return (
            None if rpm is None else rpm - sent_requests,
            None if tpm is None else tpm - sent_tokens,
            float(WINDOW_S),
        )

    def _roll(self, load: OfferingLoad) -> None:
        """Fold finished seconds into the forecast and drop ring buckets older than the window."""
        second = int(self._clock())
        if second <= load.second:
            return
        load.holt.add(load.count)
        load.holt.add_quiet(second - load.second - 1)
        load.second, load.count = second, 0
        while load.ring and load.ring[0][0] <= second - WINDOW_S:
            load.ring.pop(0)


def _sent_since(load: OfferingLoad, since: float) -> tuple[int, int]:
    first = math.floor(since)
    requests = tokens = 0
    for second, r, t in load.ring:
        if second >= first:
            requests, tokens = requests + r, tokens + t
    return requests, tokens
