"""What the evaluation would publish, measured on the same virtual fleet: the stand-in for the probe
workers and ``stats_refresh`` (the Django pipeline is not in this loop; its estimators are tested
elsewhere). Every ``PROBE_EVERY_S`` each offering gets ``PER_ROUND`` performance probes at ~1k and
~10k input tokens (the simulator's timing and network draws at that instant, incidents and drift
included) over a one-hour window. Integrity probes are simulated requests too, run once per
offering when it enters the catalog (before the replay's traffic for the starting fleet; on arrival
for one that joins later): price truth sends ``PRICE_PROBES`` requests and compares the usage the
offering reports and the invoice it sends with the tokens counted and the published price; canaries
ask ``CANARIES`` checkable questions and grade the answers. The flags come from those outcomes only,
never from the fleet's configuration; until they are in, the offering is ``integrity_pending``.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

from bench.routing_sim.world import REGION, World
from contracts.snapshot import CatalogSnapshot, OfferingSnapshot, OfferingStats, StatsSnapshot
from sim import completion
from sim.draws import Draws, mix64, stable_hash
from sim.fleet import Offering
from sim.perf import active_incidents, draw_timing
from sim.prompt import Prompt, Segment
from sim.usage import SimUsage

PROBE_EVERY_S = 300.0  # performance probes per offering per region (evaluation's default interval)
PER_ROUND = 2
WINDOW_S = 3600.0
FLAG_FROM = 1.05  # reported/counted or billed/published above this: an integrity flag
CANARIES = 20
QUALITY_FLAG_BELOW = 0.9  # canaries answered right below this share: degraded_quality
PRICE_PROBES = 3
CANARY_QUESTIONS = tuple(f"What is {a} + {b}?" for a, b in ((17, 25), (303, 29), (41, 58), (1200, 34), (7, 96)))


INTEGRITY_S = 60.0  # from an offering's arrival to its last integrity probe's outcome


class Evaluation:
    """``joins``: provider -> virtual second its offerings enter the catalog (the rest are there from
    the start, their integrity probes run before the traffic)."""

    def __init__(self, world: World, offerings: list[OfferingSnapshot], joins: dict[str, float] | None = None) -> None:
        self.world = world
        self.all = offerings
        self.joins = {o.offering_id: (joins or {}).get(o.provider, -INTEGRITY_S) for o in offerings}
        self.samples: dict[int, list[tuple[float, float | None, float | None, float | None]]] = {}
        self.integrity: dict[int, dict[str, object]] = {}
        self.version = 0
        self.next_round = 0.0
        self.shown: tuple[tuple[int, bool], ...] = ()
        self.catalog_version = 0
        self.changed()

    @property
    def offerings(self) -> list[OfferingSnapshot]:
        """Those in the catalog now."""
        return [o for o in self.all if self.joins[o.offering_id] <= self.world.clock.t]

    def changed(self) -> bool:
        """Run the integrity probes that are due; True when the catalog the gateway sees changed (an
        offering joined, or its integrity probes came in)."""
        now = self.world.clock.t
        for o in self.offerings:
            if o.offering_id not in self.integrity and now >= self.joins[o.offering_id] + INTEGRITY_S:
                self.integrity[o.offering_id] = self._integrity(o)
        shown = tuple((o.offering_id, o.offering_id not in self.integrity) for o in self.offerings)
        if shown == self.shown:
            return False
        self.shown = shown
        self.catalog_version += 1
        return True

    def catalog(self, base: CatalogSnapshot) -> CatalogSnapshot:
        """The catalog as publishing would have it now: joined offerings, unprobed ones integrity_pending."""
        pending = dict(self.shown)
        offerings = tuple(
            dataclasses.replace(o, integrity_pending=pending[o.offering_id])
            for o in base.offerings
            if o.offering_id in pending
        )
        return dataclasses.replace(base, version=base.version + self.catalog_version, offerings=offerings)

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
        """Price-truth and canary probes sent to the offering now, and the flags their outcomes raise."""
        live = self._live(o)
        reported = counted = billed = published = 0
        for k in range(PRICE_PROBES):
            draws = Draws(mix64(stable_hash(f"price:{live.key}:{k}")))
            prompt = Prompt(max_tokens=200, stream=False)
            prompt.add(Segment(norm=f"price{k}".encode(), raw=b"", tokens=1000 + 500 * k))
            answer = completion.build(prompt, live.profile, draws, max_tokens=200, tool_id_prefix="call_")
            truth = SimUsage(prompt.tokens, 0, 0, 0, answer.output_tokens, answer.reasoning_tokens)
            said = truth.inflated(live.profile.dishonesty.token_overreport)  # what its usage object reports
            reported += said.input_total + said.output
            counted += truth.input_total + truth.output  # our tokenizer's count of the same bytes
            billed += said.cost(live.billed)  # its invoice
            published += said.cost(o.prices)  # its reported usage at its published price
        right = 0
        for k in range(CANARIES):
            question = CANARY_QUESTIONS[k % len(CANARY_QUESTIONS)]
            prompt = Prompt(max_tokens=32, stream=False, last_user_text=question)
            prompt.add(Segment(norm=question.encode(), raw=question.encode(), tokens=12))
            draws = Draws(mix64(stable_hash(f"canary:{live.key}:{k}")))
            got = completion.build(prompt, live.profile, draws, max_tokens=32, tool_id_prefix="call_").text
            a, b = (int(x) for x in question.removeprefix("What is ").removesuffix("?").split(" + "))
            right += got.strip() == str(a + b)
        overcount = reported / counted if counted else 1.0
        ratio = billed / published if published else 1.0
        quality = right / CANARIES
        flags = [
            name for name, value in (("token_overcount", overcount), ("price_mismatch", ratio)) if value > FLAG_FROM
        ]
        if quality < QUALITY_FLAG_BELOW:
            flags.append("degraded_quality")
        cache = None if o.cache_policy == "none" else 0.9
        return {"overcount_factor": overcount, "billed_ratio": ratio, "price_n": PRICE_PROBES, "quality_score": quality,
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
            **self.integrity.get(o.offering_id, {}),  # type: ignore[arg-type]
        )
