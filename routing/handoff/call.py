"""Everything one API call accumulates between its arrival and its usage event."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from contracts.holds import output_clamp
from contracts.keyrecord import KeyRecord
from contracts.pricing import charge_micros
from contracts.route_explain import RouteCandidate
from contracts.snapshot import OfferingSnapshot
from contracts.usage import MICROS_PER_UNIT, Tokens, UsageEvent, UsageSource, UsageStatus, cost_micros
from routing.handoff.hold import allowance
from routing.http.asgi_io import request_id_headers
from routing.limits.admission import Admission
from routing.usage.answer_facts import AnswerFacts
from routing.usage.tracker import UsageTracker
from routing.wire.dialects import Dialect
from routing.wire.request import Body, RequestView

log = logging.getLogger("routing.handoff.call")


@dataclass(frozen=True, slots=True)
class Bill:
    tokens: Tokens
    source: UsageSource
    flags: tuple[str, ...]
    cost_micros: int
    charge_micros: int
    reported_cost_micros: int | None = None  # the provider's own cost, when its usage says
    # Output tokens reported (or streamed) beyond the call's output allowance: cut from ``tokens``, never
    # charged; what the provider bills for them is its over-report (contracts.holds).
    clamped_output: int = 0

    @property
    def charge_usd(self) -> float:
        return self.charge_micros / MICROS_PER_UNIT


@dataclass(slots=True)
class Call:
    request_id: str
    dialect: Dialect
    view: RequestView
    body: Body
    headers: dict[str, str]
    record: KeyRecord
    tracker: UsageTracker
    mode: str = "balanced"
    route_reason: str = ""
    explain_route: Callable[[], tuple[RouteCandidate, ...]] = tuple  # routing.router.route.Route.candidates
    fingerprint: str | None = None
    admission: Admission | None = None
    admitting: asyncio.Future[Admission] | None = None  # in flight: settled at once if the client leaves
    offering: OfferingSnapshot | None = None
    byok: bool = False
    attempts: int = 0
    status: UsageStatus = "failed"
    http_status: int = 0
    error_code: str = ""  # the stable code of the error the caller saw
    complete: bool = False  # the upstream's answer arrived whole
    delivered: bool = False  # some of it reached the client
    response_started: bool = False  # http.response.start was sent: errors must go in-band
    client_gone: bool = False
    ttft_ms: float | None = None
    extra_flags: list[str] = field(default_factory=list)
    # Hands the usage event to Redis just before the answer's last byte (routing.handlers.accounting): a gateway
    # killed right after answering has written its event already. ``early`` is (event, its futures).
    # It takes the call as its argument instead of holding it: a call that pointed to itself would be a
    # reference cycle on every request, freed only by the garbage collector's pauses.
    before_last_byte: Callable[[Call], Awaitable[None]] | None = None
    early: tuple[UsageEvent, list[Any]] | None = None
    facts: AnswerFacts = field(default_factory=AnswerFacts)  # upstream id, finish reason, thinking seen
    started_at: float = field(default_factory=time.time)
    started_mono: float = field(default_factory=time.monotonic)
    # The last bill and what it was computed from: the answer's usage for the caller, the early usage
    # event and the settlement all ask for the same bill, computed once (routing.handoff.call.Call._bill).
    _bill_memo: tuple[OfferingSnapshot, tuple[object, ...], Bill] | None = field(default=None, repr=False)

    def release_body(self) -> None:
        """An offering answered: no other attempt will send the request again, so the parsed body (an
        agent's whole conversation, often hundreds of KB) and the request headers read from the caller
        (its API key among them) are let go instead of living as long as the stream."""
        self.body = {}
        self.headers = {}

    def explain_now(self) -> None:
        """Build the route explanation now and let the routing decision go: its scored candidates
        (≈ 0.9 KB for one, more for each other) would otherwise live as long as the stream. A stream
        whose usage event is already built (all of it came in one go) has nothing left to save."""
        if self.early is None:
            self.explain_route = partial(tuple, self.route_candidates)  # tuple() of a tuple is that tuple

    @property
    def route_candidates(self) -> tuple[RouteCandidate, ...]:
        """Why this offering: built when the usage event is (or once a stream's first bytes are out),
        not while the caller waits. Never at the price of the event itself: a failing explanation is
        logged and left out."""
        try:
            return self.explain_route()
        except Exception:
            log.exception("route explanation of %s failed", self.request_id)
            return ()

    def bill(self) -> Bill:
        """What this call costs now: zero unless an offering answered (its first byte arrived). Whether
        the tenant pays it is the end state's decision (routing.handoff.end_state)."""
        if self.offering is None:
            return Bill(Tokens(), "provider", tuple(self.extra_flags), 0, 0)
        return self._bill(complete=self.complete)

    def _bill(self, *, complete: bool) -> Bill:
        assert self.offering is not None
        tracker = self.tracker
        inputs = (
            complete, tracker.revision, tracker.ascii_chars, tracker.other_chars,
            tracker.input_estimate, len(self.extra_flags), self.byok, self.record.markup_bps,
        )  # fmt: skip
        memo = self._bill_memo
        if memo is not None and memo[0] is self.offering and memo[1] == inputs:
            return memo[2]
        tokens, source, flags = tracker.tokens(self.offering, complete=complete)
        tokens, clamped = output_clamp(tokens, self.output_allowance())
        if clamped:
            flags = (*flags, "output_clamped")
        cost = cost_micros(tokens, self.offering.prices)
        charge = charge_micros(cost_micros=cost, markup_bps=self.record.markup_bps, byok=self.byok)
        reported = tracker.reported_cost() if source == "provider" else None
        bill = Bill(tokens, source, flags + tuple(self.extra_flags), cost, charge, reported, clamped)
        self._bill_memo = (self.offering, inputs, bill)
        return bill

    def output_allowance(self) -> int:
        """The most output (reasoning included) this call may be charged for on its offering: what its
        hold priced (routing.handoff.hold)."""
        assert self.offering is not None
        return allowance(self.offering, self.view)

    def usage_for_client(self) -> dict[str, object]:
        """The usage object the caller sees, built when the provider's usage has just arrived."""
        if self.offering is None:
            return self.dialect.usage(Tokens(), 0.0, estimated=True)
        bill = self._bill(complete=True)
        return self.dialect.usage(bill.tokens, bill.charge_usd, estimated=bill.source == "estimated")

    def provenance(self) -> list[tuple[bytes, bytes]]:
        headers = [*request_id_headers(self.request_id), (b"x-tokenway-route", self.route_reason.encode())]
        if self.offering is not None:
            headers.append((b"x-tokenway-provider", self.offering.provider.encode()))
            # A stable name (provider/model), not a database id that differs between deployments.
            headers.append((b"x-tokenway-offering", f"{self.offering.provider}/{self.offering.model}".encode()))
            if self.offering.integrity_pending:  # served only because the model has no checked offering
                headers.append((b"x-tokenway-integrity", b"unverified"))
        return headers
