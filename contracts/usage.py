"""The usage event: one API request's tokens and cost, keyed by its request id.

The gateway builds it after the response (or the client's disconnect) and hands
it to metering over the Redis stream ``contracts.redis_keys.USAGE_STREAM``;
metering applies it to the ledger exactly once per ``request_id``.

Version rules: a field added with a default (old events still parse) keeps ``USAGE_EVENT_VERSION``;
deploy metering before the gateway so the reader knows the field first. A renamed or re-interpreted
field bumps the version, and a reader refuses versions it does not know.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, get_args

import orjson

from contracts.route_explain import RouteCandidate
from contracts.storable import (
    EPOCH_MAX_S,
    float_storable,
    identity_storable,
    int_storable,
    json_storable,
    text_storable,
)

USAGE_EVENT_VERSION = 1
MICROS_PER_UNIT = 1_000_000  # amounts are integer micro-units of the currency (USD)
TOKENS_PER_PRICE_UNIT = 1_000_000  # prices are quoted per 1M tokens
# "rejected": refused after the key was authenticated and before any provider was tried (limits,
# balance, scope, unknown model, invalid body, no offering): zero tokens, zero money, no hold.
UsageStatus = Literal["ok", "upstream_error", "client_cancelled", "failed", "rejected"]
USAGE_STATUSES: tuple[UsageStatus, ...] = get_args(UsageStatus)
# Whose token counts the event carries: the provider's usage object, or our estimate when none came.
UsageSource = Literal["provider", "estimated"]
USAGE_SOURCES: tuple[UsageSource, ...] = get_args(UsageSource)
# How a call ended, priced on purpose (docs/billing.md, "End states"): what the tenant pays and what
# provider cost is booked follow from it. Extensible: a new state is added here with its row there;
# readers treat an unknown state like "gateway_error". "" = an event from before end states existed.
EndState = Literal[
    "completed",  # the whole answer reached the client
    "client_cancelled",  # the client left after the answer started; the upstream was drained for its usage
    "client_gone_before_answer",  # the client left after admission, before any byte of the answer
    "client_gone_in_admission",  # the client left while admission ran: the hold released at once
    "upstream_cut",  # the stream broke after its first byte (connection cut, EOF, in-band provider error)
    "upstream_timeout",  # idle gap or deadline, mid-stream or before any provider answered
    "upstream_error",  # every attempt failed before the first byte (HTTP error, refused connection)
    "gateway_error",  # our failure after admission (a bug, Redis gone mid-call)
    "rejected",  # refused before anything was held or forwarded
    "hedge_cancelled",  # a hedged attempt cancelled because another answered: provider cost only
    # the gateway ended the stream: its output passed the call's output allowance (max_tokens plus the
    # model's reasoning cap, contracts.holds), which its hold priced; charged, clamped to the allowance
    "hold_exhausted",
    "",
]
END_STATES: tuple[str, ...] = get_args(EndState)
# The tenant pays for an answer it got or one it walked away from (the provider generated it and bills
# it); nothing when the answer broke on the provider's or our side. Provider cost is booked in every state.
CHARGED_END_STATES: frozenset[str] = frozenset({"completed", "client_cancelled", "hold_exhausted", ""})


@dataclass(frozen=True, slots=True)
class Prices:
    """Micro-units per 1M tokens, per component (a price snapshot of one offering)."""

    input: int
    output: int
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    reasoning: int | None = None  # None = billed as output
    version: int = 1  # the offering's price version this snapshot came from


@dataclass(frozen=True, slots=True)
class Tokens:
    input_uncached: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0  # includes reasoning tokens
    reasoning: int = 0  # the part of output spent on reasoning

    @property
    def input_total(self) -> int:
        return self.input_uncached + self.cache_read + self.cache_write_5m + self.cache_write_1h


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def cost_micros(tokens: Tokens, prices: Prices) -> int:
    """Exact cost: Σ tokens × price per 1M, rounded up once to a whole micro-unit."""
    reasoning_price = prices.output if prices.reasoning is None else prices.reasoning
    total = (
        tokens.input_uncached * prices.input
        + tokens.cache_read * prices.cache_read
        + tokens.cache_write_5m * prices.cache_write_5m
        + tokens.cache_write_1h * prices.cache_write_1h
        + (tokens.output - tokens.reasoning) * prices.output
        + tokens.reasoning * reasoning_price
    )
    return _ceil_div(total, TOKENS_PER_PRICE_UNIT)


@dataclass(frozen=True, slots=True)
class UsageEvent:
    request_id: str
    tenant_id: int
    key_id: int
    model: str
    offering_id: int | None  # None when no offering was reached (refused before routing)
    provider: str | None
    region: str
    route_mode: str
    route_reason: str
    tokens: Tokens
    usage_source: UsageSource
    prices: Prices | None
    cost_micros: int  # what the provider charges us, from the price snapshot
    charge_micros: int  # what the tenant pays (contracts.pricing.charge_micros)
    status: UsageStatus
    http_status: int
    stream: bool
    byok: bool = False
    dialect_in: str = "openai"  # the caller's wire format: "openai" | "anthropic"
    started_at: float = 0.0  # epoch seconds
    ttft_ms: float | None = None
    total_ms: float = 0.0
    attempts: int = 1  # 1 + failovers
    hold_id: str | None = None
    hold_micros: int = 0
    cache_fingerprint: str | None = None
    flags: tuple[str, ...] = ()  # e.g. "clamped_cache_read", "usage_missing"
    finished_at: float = 0.0
    error_code: str = ""  # the stable code the caller saw when the call was refused or failed ("" when ok)
    route_candidates: tuple[RouteCandidate, ...] = ()  # contracts.route_explain: why this offering, why not the others
    # The provider's own reported cost (contracts.provider_usage.read_reported_cost), None when the wire gives none.
    provider_cost_micros: int | None = None
    end_state: EndState = ""  # how the call ended: decides what the tenant pays (docs/billing.md)
    finish_reason: str = ""  # the provider's own word (stop, length, tool_calls, end_turn, ...); "" if none came
    upstream_id: str = ""  # the provider's response id (chatcmpl-..., msg_...), for its support and invoices
    # The W3C traceparent of the gateway's server span when the call was traced ("" when not): metering's
    # ingest span links back to it, so a trace shows when the call was billed.
    traceparent: str = ""
    # Output tokens the provider reported (or streamed) beyond what the caller allowed (contracts.holds): cut
    # from ``tokens`` and never charged; the provider's over-report, flagged "output_clamped".
    output_clamped_tokens: int = 0
    version: int = field(default=USAGE_EVENT_VERSION)

    def to_json(self) -> bytes:
        # orjson serialises (slotted, nested) dataclasses natively: same bytes as asdict(), ~10x cheaper.
        return orjson.dumps(self)

    @classmethod
    def from_json(cls, raw: bytes | str) -> UsageEvent:
        data: dict[str, Any] = orjson.loads(raw)
        if data.get("version") != USAGE_EVENT_VERSION:
            raise ValueError(f"unsupported usage event version {data.get('version')!r}")
        if data.get("status") not in USAGE_STATUSES or data.get("usage_source") not in USAGE_SOURCES:
            raise ValueError(f"unknown usage status/source {data.get('status')!r}/{data.get('usage_source')!r}")
        data["tokens"] = Tokens(**data["tokens"])
        data["prices"] = Prices(**data["prices"]) if data.get("prices") else None
        data["flags"] = tuple(data.get("flags") or ())
        data["route_candidates"] = tuple(RouteCandidate.from_dict(c) for c in data.get("route_candidates") or ())
        return cls(**data).storable()

    def storable(self) -> UsageEvent:
        """This event with every value PostgreSQL would refuse made storable (contracts.storable): the
        gateway calls it where it builds the event, metering where it reads one. ``self`` when nothing
        needed it (the common case: a few C-speed checks). Raises TypeError for a value of the wrong
        type (a number that is a string): that is not an event to guess at."""
        if _plainly_storable(self):
            return self
        return self._repaired()

    def _repaired(self) -> UsageEvent:
        changes: dict[str, Any] = {}
        for name, limit in TEXT_COLUMNS.items():
            value = getattr(self, name)
            if value is None and name in _OPTIONAL_TEXT:
                continue
            if not isinstance(value, str):
                raise TypeError(f"usage event field {name} must be text, not {type(value).__name__}")
            fixed = identity_storable(value, limit) if name == "request_id" else text_storable(value, limit)
            if fixed is not value:
                changes[name] = fixed
        for name in _INT_FIELDS:
            value = getattr(self, name)
            if value is not None and int_storable(value) != value:
                changes[name] = int_storable(value)
        tokens = Tokens(*(int_storable(getattr(self.tokens, t.name)) for t in fields(Tokens)))
        if tokens != self.tokens:
            changes["tokens"] = tokens
        if self.prices is not None:
            prices = _prices_storable(self.prices)
            if prices != self.prices:
                changes["prices"] = prices
        for name in ("started_at", "finished_at"):
            value = getattr(self, name)
            if float_storable(value, 0.0, EPOCH_MAX_S) != value:
                changes[name] = float_storable(value, 0.0, EPOCH_MAX_S)
        if float_storable(self.total_ms) != self.total_ms:
            changes["total_ms"] = float_storable(self.total_ms)
        if self.ttft_ms is not None and float_storable(self.ttft_ms) != self.ttft_ms:
            changes["ttft_ms"] = float_storable(self.ttft_ms)
        flags = tuple(text_storable(str(flag), FLAG_CHARS) for flag in self.flags)
        if flags != self.flags:
            changes["flags"] = flags
        candidates = tuple(_candidate_storable(c) for c in self.route_candidates)
        if candidates != self.route_candidates:
            changes["route_candidates"] = candidates
        return replace(self, **changes) if changes else self


# Text fields -> the size of the column that stores them (metering's usage record; tests/contracts pins
# the two together). Fields metering does not store are bounded too: they travel in every copy.
TEXT_COLUMNS: dict[str, int] = {
    "request_id": 64, "model": 100, "provider": 63, "region": 32, "route_mode": 16, "route_reason": 200,
    "usage_source": 16, "status": 32, "dialect_in": 16, "cache_fingerprint": 128, "error_code": 64,
    "end_state": 32, "finish_reason": 64, "upstream_id": 128, "hold_id": 64, "traceparent": 128,
}  # fmt: skip
_OPTIONAL_TEXT = frozenset({"provider", "cache_fingerprint", "hold_id"})
_INT_FIELDS = ("tenant_id", "key_id", "offering_id", "cost_micros", "charge_micros", "hold_micros",
               "provider_cost_micros", "http_status", "attempts")  # fmt: skip
FLAG_CHARS = 64  # a flag is a short word of ours ("clamped_output"); anything longer is clipped


_TEXT_LIMITS = tuple(TEXT_COLUMNS.values())
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


def _plainly_storable(e: UsageEvent) -> bool:
    """The gateway's usual event, checked with a few C-speed scans: ASCII text without NUL and within its
    column, integers inside bigint, times in range. False sends it through the full repair (which may
    still change nothing: non-ASCII text is fine). Text in ``TEXT_COLUMNS`` order."""
    texts = (e.request_id, e.model, e.provider or "", e.region, e.route_mode, e.route_reason, e.usage_source,
             e.status, e.dialect_in, e.cache_fingerprint or "", e.error_code, e.end_state, e.finish_reason,
             e.upstream_id, e.hold_id or "", e.traceparent)  # fmt: skip
    t, p = e.tokens, e.prices
    numbers: tuple[int, ...] = (e.tenant_id, e.key_id, e.offering_id or 0, e.cost_micros, e.charge_micros, e.hold_micros,
               e.provider_cost_micros or 0, e.http_status, e.attempts, t.input_uncached, t.cache_read,
               t.cache_write_5m, t.cache_write_1h, t.output, t.reasoning)  # fmt: skip
    if p is not None:
        numbers += (p.input, p.output, p.cache_read, p.cache_write_5m, p.cache_write_1h, p.reasoning or 0, p.version)
    try:
        joined = "".join(texts) + "".join(e.flags)
        if not joined.isascii() or "\x00" in joined or any(map(operator.gt, map(len, texts), _TEXT_LIMITS)):
            return False
        if min(numbers) < _INT_MIN or max(numbers) > _INT_MAX or (p is not None and p.version >= 2**31):
            return False
    except TypeError:  # a value of the wrong type: the repair names it
        return False
    if not (0.0 <= e.started_at <= EPOCH_MAX_S and 0.0 <= e.finished_at <= EPOCH_MAX_S):
        return False  # NaN fails every comparison: repaired too
    if not (0.0 <= e.total_ms < math.inf and (e.ttft_ms is None or 0.0 <= e.ttft_ms < math.inf)):
        return False
    if any(len(flag) > FLAG_CHARS for flag in e.flags):
        return False
    words = "".join([c.provider + c.verdict + "".join(c.flags) for c in e.route_candidates])
    return words.isascii() and "\x00" not in words


def _prices_storable(prices: Prices) -> Prices:
    return Prices(
        input=int_storable(prices.input),
        output=int_storable(prices.output),
        cache_read=int_storable(prices.cache_read),
        cache_write_5m=int_storable(prices.cache_write_5m),
        cache_write_1h=int_storable(prices.cache_write_1h),
        reasoning=None if prices.reasoning is None else int_storable(prices.reasoning),
        version=int_storable(prices.version, 0, 2**31 - 1),  # an integer column
    )


def _candidate_storable(candidate: RouteCandidate) -> RouteCandidate:
    texts = (candidate.provider, candidate.verdict, *candidate.flags)
    if all(text.isascii() and "\x00" not in text for text in texts) and type(candidate.offering_id) is int:
        return candidate  # the gateway's own words from the catalog: the usual case
    return RouteCandidate(
        provider=text_storable(candidate.provider),
        offering_id=int_storable(candidate.offering_id),
        verdict=text_storable(candidate.verdict),
        score=candidate.score,
        parts=json_storable(candidate.parts),
        flags=tuple(text_storable(flag) for flag in candidate.flags),
    )
