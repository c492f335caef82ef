"""The decision in words: each candidate's score parts and verdict, and the part that decided.

Compact on purpose (it rides on every usage event): parts rounded to 3 decimals, zero parts left out.
"""

from __future__ import annotations

from contracts.route_explain import WINNER, RouteCandidate
from contracts.snapshot import OfferingSnapshot
from routing.router.strategy import Scored

PART_DIGITS = 3


def deciding_part(winner: Scored, other: Scored) -> str:
    """The part by which ``other`` trails ``winner`` the most (integrity flags first: they decide alone)."""
    if other.last_resort and not winner.last_resort:
        return "flags"
    gaps = {name: other.parts.get(name, 0.0) - value for name, value in winner.parts.items()}
    name, gap = max(gaps.items(), key=lambda item: item[1])
    return name if gap > 0 else "tie"


def _candidate(x: Scored, verdict: str) -> RouteCandidate:
    parts = {k: round(v, PART_DIGITS) for k, v in x.parts.items() if round(v, PART_DIGITS)}
    offering = x.signals.offering
    live = x.signals.live
    flags = x.signals.resolved().flags + (("half_open",) if live is not None and live.half_open else ())
    return RouteCandidate(offering.provider, offering.offering_id, verdict, round(x.score, PART_DIGITS), parts, flags)


def explain(
    ordered: list[Scored], dropped: list[tuple[OfferingSnapshot, str]]
) -> tuple[tuple[RouteCandidate, ...], str]:
    """(candidates with verdicts, the deciding factor of the winner over the runner-up)."""
    if not ordered:
        return tuple(RouteCandidate(o.provider, o.offering_id, f"dropped:{why}") for o, why in dropped), "none"
    winner = ordered[0]
    rows = [_candidate(winner, WINNER)]
    rows += [_candidate(x, f"lost:{deciding_part(winner, x)}") for x in ordered[1:]]
    rows += [RouteCandidate(o.provider, o.offering_id, f"dropped:{why}") for o, why in dropped]
    factor = deciding_part(winner, ordered[1]) if len(ordered) > 1 else "only"
    return tuple(rows), factor
