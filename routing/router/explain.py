"""The decision in words: each candidate's score parts and verdict, and the part that decided.

Compact on purpose (it rides on every usage event): parts rounded to 3 decimals, zero parts left out.
``deciding_part`` runs per request (the header); ``explain`` only when the usage event is built,
after the answer went out.
"""

from __future__ import annotations

from contracts.route_explain import PARTS, WINNER, RouteCandidate
from contracts.snapshot import OfferingSnapshot
from routing.router.strategy import Scored

PART_DIGITS = 3
MAX_SCORED_ROWS = 12  # ``auto`` scores every offering of every model: the record keeps the best dozen
MAX_DROPPED_ROWS = 8
Dropped = list[tuple[OfferingSnapshot, str]]


def deciding_part(winner: Scored, other: Scored) -> str:
    """The part by which ``other`` trails ``winner`` the most (integrity flags first: they decide alone)."""
    if other.last_resort and not winner.last_resort:
        return "flags"
    widest, top = 0, 0.0
    for i, (ours, theirs) in enumerate(zip(winner.terms, other.terms, strict=True)):
        gap = theirs - ours
        if not i or gap > top:  # the first widest gap wins a tie, as max() would pick it
            widest, top = i, gap
    return PARTS[widest] if top > 0 else "tie"


def decisive(ordered: list[Scored]) -> str:
    """The winner's deciding part over the runner-up ("only" without one)."""
    return deciding_part(ordered[0], ordered[1]) if len(ordered) > 1 else "only"


def _candidate(x: Scored, verdict: str) -> RouteCandidate:
    # Zero parts (most of them) are skipped before rounding; each kept part is rounded once.
    parts = {name: r for name, v in zip(PARTS, x.terms, strict=True) if v and (r := round(v, PART_DIGITS))}
    offering, live = x.signals.offering, x.signals.live
    flags = x.signals.resolved().flags
    if live is not None and (live.half_open or live.recovered):  # live evidence of a recovery decided its score
        flags += (("half_open",) if live.half_open else ()) + (("recovered",) if live.recovered else ())
    return RouteCandidate(offering.provider, offering.offering_id, verdict, round(x.score, PART_DIGITS), parts, flags)


def explain(ordered: list[Scored], dropped: Dropped) -> tuple[RouteCandidate, ...]:
    """Every candidate with its verdict: the winner, why each other lost, which filter dropped the rest."""
    shown = ordered[:MAX_SCORED_ROWS]
    rows = [_candidate(x, f"lost:{deciding_part(ordered[0], x)}" if i else WINNER) for i, x in enumerate(shown)]
    rows += [RouteCandidate(o.provider, o.offering_id, f"dropped:{why}") for o, why in dropped[:MAX_DROPPED_ROWS]]
    return tuple(rows)
