"""What the evaluation would publish, measured on the same virtual fleet: the stand-in for the probe
workers and ``stats_refresh`` (the Django pipeline is not in this loop; its estimators are tested
elsewhere). Every ``PROBE_EVERY_S`` each offering gets ``PER_ROUND`` performance probes at ~1k and
~10k input tokens (the simulator's timing and network draws at that instant, incidents and drift
included) over a one-hour window; the integrity probes run at start-up: price truth (reported vs
counted tokens, billed vs published cost) and canaries (a quantized model's wrong answers).
"""

from __future__ import annotations

import math
import statistics

from bench.routing_sim.world import REGION, World
from contracts.snapshot import OfferingSnapshot, OfferingStats, StatsSnapshot
from sim.draws import Draws, mix64, stable_hash
from sim.fleet import Offering
from sim.perf import active_incidents, draw_timing

PROBE_EVERY_S = 300.0  # performance probes per offering per region (evaluation's default interval)
PER_ROUND = 2
WINDOW_S = 3600.0
FLAG_FROM = 1.05  # reported/counted or billed/published above this: an integrity flag
CANARIES = 20


class Evaluation:
    def __init__(self, world: World, offerings: list[OfferingSnapshot]) -> None:
        self.world = world
        self.offerings = offerings
        self.samples: dict[int, list[tuple[float, float | None, float | None, float | None]]] = {}
        self.integrity = {o.offering_id: self._integrity(o) for o in offerings}
        self.version = 0
        self.next_round = 0.0

    def due(self) -> bool:
        return self.world.clock.t >= self.next_round

    def round(self) -> StatsSnapshot:
        now = self.world.clock.t
        for o in self.offerings:
            kept = [s for s in self.samples.get(o.offering_id, []) if s[0] > now - WINDOW_S]
            kept += [self._probe(o, k) for k in range(PER_ROUND)]
            self.samples[o.offering_id] = kept
        self.next_round = now + PROBE_EVERY_S
        self.version += 1
        per = {str(o.offering_id): self._stats(o) for o in self.offerings}
        return StatsSnapshot(version=self.version, generated_at=now, window="1h", stats={REGION: per, "all": per})

    def _live(self, o: OfferingSnapshot) -> Offering:
        return self.world.offering(o.provider, o.model)

    def _probe(self, o: OfferingSnapshot, k: int) -> tuple[float, float | None, float | None, float | None]:
        """(time, ttft 1k ms, ttft 10k ms, tokens/s), None where the probe failed."""
        live, clock = self._live(o), self.world.clock
        draws = Draws(mix64(stable_hash(f"probe:{live.key}:{clock.t}:{k}")))
        incidents = active_incidents(live.profile, clock)  # type: ignore[arg-type]
        if any(i.kind == "outage" for i in incidents) or any(draws.chance(r) for r in live.profile.faults.values()):
            return clock.t, None, None, None
        hop = self.world.fleet.network.hop(REGION, o.provider, draws)
        rtt = hop.delay_ms if hop else 0.0
        small = draw_timing(live.profile, clock, draws, uncached_tokens=1000, incidents=incidents)  # type: ignore[arg-type]
        large = draw_timing(live.profile, clock, draws, uncached_tokens=10_000, incidents=incidents)  # type: ignore[arg-type]
        return clock.t, small.ttft_s * 1000 + rtt, large.ttft_s * 1000 + rtt, small.tokens_per_s

    def _integrity(self, o: OfferingSnapshot) -> dict[str, object]:
        profile = self._live(o).profile
        dishonesty = profile.dishonesty
        overcount = dishonesty.token_overreport
        live = self._live(o)
        billed = live.billed.input / o.prices.input if o.prices.input else 1.0
        flags = []
        if overcount > FLAG_FROM:
            flags.append("token_overcount")
        if billed > FLAG_FROM:
            flags.append("price_mismatch")
        quality = 1.0 - (dishonesty.wrong_answer_rate if dishonesty.quantized else 0.0)
        if quality < 0.9:
            flags.append("degraded_quality")
        cache = None if o.cache_policy == "none" else 0.9
        return {"overcount_factor": overcount, "billed_ratio": billed, "price_n": 3, "quality_score": quality,
                "quality_n": CANARIES, "flags": tuple(flags), "cache_hit_ratio": cache, "cache_n": 4 if cache else 0}  # fmt: skip

    def _stats(self, o: OfferingSnapshot) -> OfferingStats:
        samples = self.samples.get(o.offering_id, [])
        ok = [s for s in samples if s[1] is not None]
        n = len(samples)
        errors = (n - len(ok)) / n if n else None
        small = sorted(s[1] for s in ok if s[1] is not None)
        large = [s[2] for s in ok if s[2] is not None]
        tps = [s[3] for s in ok if s[3] is not None]
        p50 = statistics.median(small) if small else None
        hi = small[min(len(small) - 1, math.ceil(len(small) / 2 + 0.98 * math.sqrt(len(small))))] if small else None
        return OfferingStats(
            o.offering_id,
            n=n,
            ttft_p50_ms=p50,
            ttft_p50_hi_ms=hi,
            ttft_10k_p50_ms=statistics.median(large) if large else None,
            tps_p50=statistics.median(tps) if tps else None,
            error_rate=errors,
            availability=None if errors is None else 1 - errors,
            **self.integrity[o.offering_id],  # type: ignore[arg-type]
        )
