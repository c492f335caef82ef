"""Why a request went where it went: each candidate's score parts and verdict (compact).

Carried by the usage event (``UsageEvent.route_candidates``), stored by metering with the usage
record and answered by ``GET /api/v1/generation``. Scores are lower-is-better score units
(docs/routing.md); parts are the weighted terms that sum to the score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Verdicts: the winner; "lost:<factor>" (the part that put it behind the winner the most);
# "dropped:<filter>" (a hard filter removed it before scoring); "fallback" (ranked, not first).
WINNER = "winner"
PARTS = ("cost", "ttft", "tps", "quality", "reliability", "flags", "affinity", "load")  # extend at the end only


@dataclass(frozen=True, slots=True)
class RouteCandidate:
    provider: str
    offering_id: int
    verdict: str  # "winner" | "lost:<part>" | "dropped:<filter>"
    score: float | None = None  # None when dropped before scoring
    parts: dict[str, float] = field(default_factory=dict)  # part name (PARTS) -> weighted score units
    flags: tuple[str, ...] = ()  # the evaluation flags and live states that shaped the score

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RouteCandidate:
        return cls(**{**data, "parts": dict(data.get("parts") or {}), "flags": tuple(data.get("flags") or ())})
