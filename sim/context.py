"""Everything one exchange needs once the request is accepted: the dialect renderers read it."""

from __future__ import annotations

from dataclasses import dataclass

from sim.cache import CacheOutcome
from sim.completion import Completion
from sim.fleet import Offering
from sim.prompt import Prompt
from sim.usage import SimUsage


@dataclass(slots=True)
class Exchange:
    offering: Offering
    prompt: Prompt
    completion: Completion
    usage: SimUsage  # as reported (after any over-reporting)
    true_usage: SimUsage
    cache: CacheOutcome
    request_id: str
    response_id: str
    model: str  # the name echoed back (what the caller sent)
    created: int
    include_usage: bool = False
    billed_cost_micros: int = 0
