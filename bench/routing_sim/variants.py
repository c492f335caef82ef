"""The workload variants the routers are compared on (docs/routing.md, "Routing simulation"): other
seeds and mixes, tight limits, a slowly degrading provider, outages, dishonest providers (one that
joins the catalog mid-run, one honest-looking provider that over-reports tokens), and overload."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.routing_sim.world import INCIDENTS, Incident

Spec = dict[str, Any]


def _outage(provider: str, model: str, start: float, duration: float) -> Incident:
    return Incident(provider, model, {"kind": "outage", "start_s": start, "duration_s": duration, "fault": "http_503"})


def _slower(provider: str, model: str, start: float, duration: float, factor: float) -> Incident:
    spec = {
        "kind": "degradation",
        "start_s": start,
        "duration_s": duration,
        "ttft_factor": factor,
        "tps_factor": 1 / factor,
    }
    return Incident(provider, model, spec)


# Volcengine's DeepSeek (the biggest limits) slows down step by step over 8 minutes and does not recover.
SLOW_DEGRADATION = tuple(
    _slower("volcengine", "deepseek-v3.2", 60.0 + 90.0 * k, 90.0, factor)
    for k, factor in enumerate((1.5, 2.0, 3.0, 4.0, 6.0))
)
OUTAGES = (
    _outage("volcengine", "deepseek-v3.2", 120.0, 150.0),
    _outage("moonshot", "kimi-k2", 240.0, 120.0),
    _outage("siliconflow", "deepseek-v3.2", 300.0, 90.0),
)
OVERREPORTS = {"token_overreport": 1.12}  # an honest-looking price, 12% more tokens reported than used


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    about: str
    seed: int = 1
    duration_s: float = 600.0
    share: dict[str, float] | None = None  # of chat, agent, long, burst (workload.SHARE when None)
    incidents: tuple[Incident, ...] = INCIDENTS
    limit_scale: float = 1.0
    dishonesty: dict[str, Spec] = field(default_factory=dict)  # provider -> its dishonesty
    joins: dict[str, float] = field(default_factory=dict)  # provider -> second its offerings join


VARIANTS = (
    Variant("documented", "the documented mix: seed 1, 10 min, an outage and a 4x slowdown"),
    Variant(
        "seed 2, agents",
        "seed 2; agents 50%, long context 8%",
        seed=2,
        share={"chat": 0.30, "agent": 0.50, "long": 0.08, "burst": 0.12},
    ),
    Variant("tight limits", "seed 3; every provider's RPM/TPM at 40%", seed=3, limit_scale=0.4),
    Variant(
        "slow degradation", "seed 4; Volcengine DeepSeek slows 1.5x..6x over 8 min", seed=4, incidents=SLOW_DEGRADATION
    ),
    Variant("outages", "seed 5; three outages, two on DeepSeek at once", seed=5, incidents=OUTAGES),
    Variant(
        "dishonest",
        "seed 6; the reseller joins at 2 min, SiliconFlow over-reports 12%",
        seed=6,
        dishonesty={"siliconflow": OVERREPORTS},
        joins={"bargain-cloud": 120.0},
    ),
    Variant("overload", "seed 7; the requests in 100 s, limits at 50%", seed=7, duration_s=100.0, limit_scale=0.5),
)
BY_NAME = {v.name: v for v in VARIANTS}
