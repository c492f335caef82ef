"""Provider truth: what providers say they cost (per request, per invoice) against our own computation.

Two comparisons, per offering:

- reported vs computed: the provider's own per-request cost (``usage.cost``, booked as provider cost)
  against our price snapshot x the tokens, summed over a window;
- invoiced vs computed, per day: an imported invoice or usage export line (``ProviderInvoiceLine``)
  against the usage records of that day and offering, amounts and tokens.

A share above ``DRIFT_SHARE`` is drift. Each request's cost is rounded up once to a whole micro-unit, so
sums may differ by up to one micro-unit per request without anyone being wrong: that much is tolerated too.
Reconciliation reports drift (``metering.reconcile``); the stats snapshot carries it to the router as
integrity flags (``provider_truth_by_offering``, read by ``evaluation.services.snapshot``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from fractions import Fraction
from typing import Any

import redis
from django.db import connection

from contracts.pricing import charge_micros
from contracts.redis_keys import STATS_SNAPSHOT
from contracts.snapshot import StatsSnapshot
from contracts.usage import Tokens, UsageEvent, cost_micros
from metering.ledger import JournalSpec
from metering.models import AccountKind, ProviderInvoiceLine
from metering.sanitize import Priced

logger = logging.getLogger(__name__)

DRIFT_SHARE = 0.01  # beyond 1% the provider and we disagree


@dataclass(frozen=True)
class CostDrift:
    """The provider's reported cost against ours, summed over the requests that carried one."""

    offering_id: int
    provider: str
    requests: int
    computed_micros: int
    reported_micros: int

    @property
    def ratio(self) -> float:
        return self.reported_micros / self.computed_micros if self.computed_micros else float("inf")

    @property
    def drifting(self) -> bool:
        return beyond_tolerance(self.reported_micros, self.computed_micros, self.requests)


@dataclass(frozen=True)
class InvoiceMatch:
    """One invoice line beside our usage records of the same day and offering."""

    line: ProviderInvoiceLine
    requests: int
    computed_micros: int  # ours: price snapshot x tokens
    booked_micros: int  # what the usage journals booked (the provider's per-request figure when it gave one)
    input_tokens: int  # every prompt token we recorded, cached or not
    output_tokens: int

    @property
    def amount_ratio(self) -> float:
        return self.line.amount_micros / self.computed_micros if self.computed_micros else float("inf")

    @property
    def token_ratio(self) -> float:
        ours, theirs = self.input_tokens + self.output_tokens, self.line.input_tokens + self.line.output_tokens
        return theirs / ours if ours else float("inf")

    @property
    def over_billed(self) -> bool:
        return self.line.amount_micros > self.computed_micros and beyond_tolerance(
            self.line.amount_micros, self.computed_micros, self.requests
        )

    @property
    def under_billed(self) -> bool:
        return self.line.amount_micros < self.computed_micros and beyond_tolerance(
            self.line.amount_micros, self.computed_micros, self.requests
        )

    @property
    def tokens_over(self) -> bool:
        ours, theirs = self.input_tokens + self.output_tokens, self.line.input_tokens + self.line.output_tokens
        return theirs > ours * (1 + DRIFT_SHARE)


def beyond_tolerance(theirs: int, ours: int, requests: int) -> bool:
    """Off by more than 1% and by more than the rounding of ``requests`` requests (one micro-unit each)."""
    return abs(theirs - ours) > max(ours * DRIFT_SHARE, requests)


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def reported_cost_drift(*, since: datetime) -> list[CostDrift]:
    """Per offering, the requests since ``since`` whose provider reported its cost (BYOK left out: not ours)."""
    rows = _rows(
        "SELECT offering_id, provider, COUNT(*), SUM(computed_cost_micros), SUM(reported_cost_micros) "
        "FROM metering_usagerecord WHERE created_at >= %s AND reported_cost_micros IS NOT NULL AND NOT byok "
        "AND offering_id IS NOT NULL GROUP BY offering_id, provider ORDER BY offering_id",
        [since],
    )
    return [CostDrift(int(o), str(p), int(n), int(c), int(r)) for o, p, n, c, r in rows]


def _usage_by_day(offering_ids: set[int], days: set[date]) -> dict[tuple[date, int], tuple[int, ...]]:
    if not offering_ids:
        return {}
    rows = _rows(
        "SELECT (finished_at AT TIME ZONE 'UTC')::date AS day, offering_id, COUNT(*), SUM(computed_cost_micros), "
        "SUM(cost_micros), SUM(input_uncached + cache_read + cache_write_5m + cache_write_1h), SUM(output) "
        "FROM metering_usagerecord WHERE offering_id = ANY(%s) AND status <> 'rejected' AND NOT byok "
        "AND finished_at >= %s AND finished_at < %s::date + 1 GROUP BY 1, 2",
        [list(offering_ids), min(days), max(days)],
    )
    return {(day, int(oid)): tuple(int(v) for v in rest) for day, oid, *rest in rows}


def invoice_matches(*, lines: list[ProviderInvoiceLine]) -> list[InvoiceMatch]:
    """Each line with the usage records of its day and offering (zeros when we have none)."""
    matched = [line for line in lines if line.offering_id is not None]
    usage = _usage_by_day({line.offering_id for line in matched if line.offering_id}, {line.day for line in matched})
    result = []
    for line in matched:
        requests, computed, booked, tokens_in, tokens_out = usage.get((line.day, int(line.offering_id or 0)), (0,) * 5)
        result.append(InvoiceMatch(line, requests, computed, booked, tokens_in, tokens_out))
    return result


@dataclass(frozen=True)
class OfferingTruth:
    """What billing learned about an offering, for the router: flags and the worst ratios seen."""

    flags: tuple[str, ...]
    billed_ratio: float | None  # provider's figure / ours (reported cost or invoice), when > 1 beyond tolerance
    overcount_factor: float | None  # invoiced tokens / recorded tokens, when beyond tolerance


def provider_truth_by_offering(*, since: datetime, invoices_since: date | None = None) -> dict[int, OfferingTruth]:
    """Offerings whose provider reported (requests since ``since``) or invoiced (days from ``invoices_since``,
    else ``since``'s day) more than our computation.

    Over-billing (reported cost or invoice amount above ours) is ``price_mismatch``; an invoice counting more
    tokens than the provider reported per request is ``token_overcount``: the probes' integrity flags."""
    billed: dict[int, float] = {}
    tokens: dict[int, float] = {}
    for drift in reported_cost_drift(since=since):
        if drift.drifting and drift.reported_micros > drift.computed_micros:
            billed[drift.offering_id] = max(billed.get(drift.offering_id, 1.0), drift.ratio)
    first_day = invoices_since or since.date()
    lines = list(ProviderInvoiceLine.objects.filter(day__gte=first_day, offering_id__isnull=False))
    for match in invoice_matches(lines=lines):
        oid = int(match.line.offering_id or 0)
        if match.over_billed and match.computed_micros:
            billed[oid] = max(billed.get(oid, 1.0), match.amount_ratio)
        if match.tokens_over and match.input_tokens + match.output_tokens:
            tokens[oid] = max(tokens.get(oid, 1.0), match.token_ratio)
    return {
        oid: OfferingTruth(
            flags=tuple(f for f, on in (("price_mismatch", oid in billed), ("token_overcount", oid in tokens)) if on),
            billed_ratio=billed.get(oid),
            overcount_factor=tokens.get(oid),
        )
        for oid in billed.keys() | tokens.keys()
    }


# --- Charging on the true count ------------------------------------------------------------------------------
#
# Evaluation's integrity statistics (the price probes count the tokens of what they send and compare the
# provider's report: ``overcount_factor`` = reported / counted) are published in the stats snapshot, which
# also carries metering's own invoice evidence (``provider_truth_by_offering``). An offering flagged
# ``token_overcount`` with a factor beyond ``DRIFT_SHARE`` reports more tokens than it served: at ingest the
# tenant is charged on the true count (the reported uncached input, output and reasoning divided by the factor,
# rounded down: cache counts are not inflated), the provider cost stays booked as the provider will bill it,
# and the cost of the difference is booked as a provider dispute. The decision is made at ingest so every
# figure the tenant sees (balance, generation record, console, Stripe meter) is the true one; it only ever
# lowers a charge, so the gateway's hold stays an upper bound.

OVERCOUNT_FLAG = "token_overcount"
CORRECTED_FLAG = "provider_overcount"  # on the usage record: charged on the true count
DISPUTE_KIND = "provider_dispute"
ALL_REGIONS = "all"  # the snapshot's region key for statistics over every region (evaluation.models)


@dataclass
class _Published:
    """The factors of the last snapshot document read (parsed again only when the document changes)."""

    raw: bytes | str | None = None
    factors: dict[int, Fraction] = field(default_factory=dict)


_PUBLISHED = _Published()


def overcount_factors(client: redis.Redis) -> dict[int, Fraction]:
    """Offering id -> its measured over-count factor, for the offerings the published stats flag for it.

    Read once per ingest batch and parsed only when it changed. The document itself is compared, not its
    version: Redis emptied and a snapshot published again start the version over at 1."""
    try:
        raw = client.get(STATS_SNAPSHOT)
    except redis.RedisError as exc:  # ingestion must not stop on it: the last factors read stay in force
        logger.warning("over-count factors not refreshed: %s", exc)
        return _PUBLISHED.factors
    if raw != _PUBLISHED.raw:
        _PUBLISHED.factors = _flagged(StatsSnapshot.from_json(raw)) if raw else {}
        _PUBLISHED.raw = raw
    return _PUBLISHED.factors


def _flagged(snapshot: StatsSnapshot) -> dict[int, Fraction]:
    """Per flagged offering, the factor of its all-regions entry, else the largest a region measured."""
    found: dict[int, Fraction] = {}
    for region, offerings in snapshot.stats.items():
        for stats in offerings.values():
            factor = stats.overcount_factor
            if OVERCOUNT_FLAG not in stats.flags or factor is None or factor <= 1 + DRIFT_SHARE:
                continue
            if region != ALL_REGIONS:
                found[stats.offering_id] = max(found.get(stats.offering_id, Fraction(0)), Fraction(str(factor)))
    for stats in snapshot.stats.get(ALL_REGIONS, {}).values():
        if OVERCOUNT_FLAG in stats.flags and stats.overcount_factor and stats.overcount_factor > 1 + DRIFT_SHARE:
            found[stats.offering_id] = Fraction(str(stats.overcount_factor))
    return found


def true_tokens(tokens: Tokens, factor: Fraction, *, clamped_output: int = 0) -> Tokens:
    """The count a provider over-reporting by ``factor`` served: reported // factor for what it inflates.

    ``clamped_output`` is what the gateway already cut from the reported output (beyond the caller's
    allowance, ``UsageEvent.output_clamped_tokens``): the factor applies to what the provider reported,
    and the result never exceeds the clamped count, so the two corrections are not applied twice.
    """
    output = min(tokens.output, int((tokens.output + max(clamped_output, 0)) / factor))
    return replace(
        tokens,
        input_uncached=int(tokens.input_uncached / factor),
        output=output,
        reasoning=min(int(tokens.reasoning / factor), output),
    )


def overcount_corrected(event: UsageEvent, priced: Priced, *, factors: dict[int, Fraction], markup_bps: int) -> Priced:
    """The priced event charged on the true count when its offering is flagged for over-counting."""
    factor = factors.get(event.offering_id or 0)
    if factor is None or event.byok or event.prices is None or event.usage_source != "provider":
        return priced
    tokens = true_tokens(priced.tokens, factor, clamped_output=event.output_clamped_tokens)
    if tokens == priced.tokens:
        return priced
    cost = cost_micros(tokens, event.prices)
    charge = min(priced.charge_micros, charge_micros(cost_micros=cost, markup_bps=markup_bps, byok=False))
    return replace(
        priced,
        tokens=tokens,
        cost_micros=cost,
        charge_micros=charge,
        flags=tuple(dict.fromkeys((*priced.flags, CORRECTED_FLAG))),
        overcount_cost_micros=priced.cost_micros - cost,
        overcount_charge_micros=priced.charge_micros - charge,
    )


def provider_dispute_journal(event: UsageEvent, priced: Priced) -> JournalSpec | None:
    """The over-count's cost claimed back from the provider, once per request id (None when there is none)."""
    amount = priced.overcount_cost_micros
    if amount <= 0:
        return None
    memo = (
        f"{event.provider} offering {event.offering_id}: over-count cost {amount}, tenant {event.tenant_id} "
        f"charged {priced.charge_micros} (not {priced.charge_micros + priced.overcount_charge_micros})"
    )
    return JournalSpec(
        key=f"{DISPUTE_KIND}:{event.request_id}",
        kind=DISPUTE_KIND,
        tenant_id=None,
        lines=[((None, AccountKind.PROVIDER_DISPUTE), amount), ((None, AccountKind.PROVIDER_COST), -amount)],
        memo=memo,
    )


@dataclass(frozen=True)
class OfferingDrift:
    """One offering's usage over a window: our cost at the recorded count against what the provider bills."""

    offering_id: int
    provider: str
    model: str
    requests: int
    computed_micros: int  # ours: price snapshot x the recorded (true) tokens
    booked_micros: int  # the provider's: its reported cost, else ours at the count it reported
    corrected: int  # requests charged on the true count (an over-counting provider)
    disputed_micros: int  # the over-count's cost booked as provider disputes

    @property
    def ratio(self) -> float:
        return self.booked_micros / self.computed_micros if self.computed_micros else float("inf")

    @property
    def drifting(self) -> bool:
        return beyond_tolerance(self.booked_micros, self.computed_micros, self.requests)


def offering_drift(*, since: datetime) -> list[OfferingDrift]:
    """Per offering with usage since ``since`` (BYOK and refused calls left out): the ops dashboard's drift."""
    rows = _rows(
        "SELECT u.offering_id, u.provider, u.model, COUNT(*), SUM(u.computed_cost_micros), SUM(u.cost_micros), "
        "COUNT(*) FILTER (WHERE u.flags ? %s), COALESCE(SUM(d.amount_micros), 0) FROM metering_usagerecord u "
        "LEFT JOIN (SELECT j.key, l.amount_micros FROM metering_journal j JOIN metering_journalline l "
        "ON l.journal_id = j.id JOIN metering_account a ON a.id = l.account_id AND a.kind = %s "
        "WHERE j.kind = %s AND j.created_at >= %s) d ON d.key = %s || u.request_id "
        "WHERE u.created_at >= %s AND u.offering_id IS NOT NULL AND NOT u.byok AND u.status <> 'rejected' "
        "GROUP BY 1, 2, 3 ORDER BY 1",
        [CORRECTED_FLAG, AccountKind.PROVIDER_DISPUTE, DISPUTE_KIND, since, f"{DISPUTE_KIND}:", since],
    )
    return [OfferingDrift(int(o), str(p), str(m), *(int(v) for v in rest)) for o, p, m, *rest in rows]
