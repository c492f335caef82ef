"""The simulated fleet in virtual time: the simulator's own limits, faults, incidents, drift, caches,
dishonesty, timing draws and network, applied to one attempt at a time without HTTP or sleeping.

Each attempt goes through the same functions ``sim/respond.py`` calls (``RateLimiter.admit``,
``FaultBook.pick``, ``active_incidents``, ``PromptCache.apply``, ``completion.build``,
``SimUsage.inflated``/``cost``, ``draw_timing``, ``Network.hop``); what this module adds is the
capacity queue (the sim's per-offering semaphore, as a heap of busy-until times).
"""

from __future__ import annotations

import heapq
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from routing.limits.ratelimit_headers import LimitHeaders
from sim import completion
from sim.draws import Draws, mix64, stable_hash
from sim.fleet import Fleet, Offering
from sim.perf import active_incidents, draw_timing
from sim.profiles import DEFAULT_PROFILES
from sim.prompt import Prompt
from sim.usage import SimUsage

REGION = "beijing"  # the gateway's region: the network distance its requests travel
ERROR_S = 0.08  # an error answer (429, 5xx) costs the caller about a round trip and a parse
STALL_DEADLINE_S = 2.0  # the gateway's first-byte deadline floor: a stalled attempt is left after it
START_HOUR = 19.95  # Beijing time at t=0: the evening drift (20-23 h, up to 1.8x TTFT) begins 3 minutes in


@dataclass(frozen=True, slots=True)
class Incident:
    provider: str
    model: str | None
    spec: dict[str, Any]


# Scripted incidents on top of the profiles' own: a 2-minute outage of Volcengine's DeepSeek (the
# offering most routers lean on) and a 4x TTFT degradation of Moonshot's Kimi for 3 minutes.
INCIDENTS = (
    Incident("volcengine", "deepseek-v3.2", {"kind": "outage", "start_s": 180, "duration_s": 120, "fault": "http_503"}),
    Incident("moonshot", "kimi-k2", {"kind": "degradation", "start_s": 360, "duration_s": 180, "ttft_factor": 4.0}),
)


class VirtualClock:
    """What the simulator's functions read from ``SimClock``, moved by the replay."""

    zero = False
    time_scale = 1.0

    def __init__(self, start_hour: float = START_HOUR, tz_offset_h: float = 8.0) -> None:
        self.t = 0.0
        self.epoch = 1_790_000_000.0  # a fixed wall clock so every run is the same
        self.epoch += ((start_hour - tz_offset_h) % 24 - (self.epoch / 3600.0) % 24) % 24 * 3600.0

    def now(self) -> float:
        return self.t

    def real_now(self) -> float:
        return self.t

    def wall(self) -> float:
        return self.epoch + self.t

    def hour(self, tz_offset_h: float) -> int:
        return int(((self.wall() / 3600.0) + tz_offset_h) % 24)

    def real(self, sim_seconds: float) -> float:
        return sim_seconds


@dataclass(slots=True)
class Attempt:
    status: int  # 200, 429, 5xx, 0 (connection failed or stalled)
    elapsed_s: float  # until the answer's first byte (200) or the failure
    retry_after_s: float | None = None
    headers: LimitHeaders | None = None
    usage: SimUsage | None = None  # true usage
    billed_micros: int = 0  # what the provider invoices (reported usage x billed prices)
    published_micros: int = 0  # true usage at the published price
    cut: bool = False  # the stream broke after its first byte (no failover possible)
    generation_s: float = 0.0  # first byte to last byte


def profiles_with_incidents(
    folder: Path, incidents: tuple[Incident, ...] = INCIDENTS, dishonesty: dict[str, dict[str, Any]] | None = None
) -> Path:
    data = yaml.safe_load(Path(DEFAULT_PROFILES).read_text())
    for provider, spec in (dishonesty or {}).items():  # a workload variant's dishonest provider
        data["providers"].setdefault(provider, {})["dishonesty"] = spec
    for incident in incidents:
        provider = data["providers"].setdefault(incident.provider, {})
        target = provider.setdefault("offerings", {}).setdefault(incident.model, {}) if incident.model else provider
        target["incidents"] = [*(target.get("incidents") or []), incident.spec]
    path = folder / "profiles.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def scaled(limit: int | None, scale: float) -> int | None:
    return None if limit is None else max(1, int(limit * scale))


class World:
    def __init__(
        self,
        *,
        seed: int,
        incidents: tuple[Incident, ...] = INCIDENTS,
        start_hour: float = START_HOUR,
        limit_scale: float = 1.0,
        dishonesty: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.limit_scale = limit_scale  # the providers' RPM/TPM limits times this (a tight-limits variant)
        with tempfile.TemporaryDirectory() as folder:
            profiles = profiles_with_incidents(Path(folder), incidents, dishonesty)
            self.fleet = Fleet(seed=seed, time_scale=0, profiles_path=profiles)
        self.clock = VirtualClock(start_hour)
        self.seed = seed
        self._busy: dict[str, list[float]] = {}

    def offering(self, provider: str, model: str) -> Offering:
        found = self.fleet.providers[provider].offering(model)
        assert found is not None, (provider, model)
        return found

    def draws(self, offering: Offering, request_index: int, attempt: int) -> Draws:
        return Draws(mix64(self.seed ^ stable_hash(offering.key) ^ (request_index << 3) ^ attempt))

    def attempt(self, offering: Offering, prompt: Prompt, *, index: int, number: int) -> Attempt:
        now, draws = self.clock.t, self.draws(offering, index, number)
        tokens = prompt.tokens + (prompt.max_tokens or 0)
        rpm, tpm = scaled(offering.rpm, self.limit_scale), scaled(offering.tpm, self.limit_scale)
        admission = self.fleet.limiter.admit(offering.key, rpm=rpm, tpm=tpm, tokens=tokens, now=now)
        headers = None
        if rpm is not None or tpm is not None:
            headers = LimitHeaders(
                admission.limit_requests,
                admission.remaining_requests,
                admission.limit_tokens,
                admission.remaining_tokens,
                admission.reset_s,
            )
        if not admission.allowed:
            return Attempt(429, ERROR_S, admission.reset_s, headers)
        failed, cut = self._fault(offering, draws)
        if failed is not None:
            failed.headers = headers
            return failed
        return self._answer(offering, prompt, draws, headers, cut=cut)

    def _fault(self, offering: Offering, draws: Draws) -> tuple[Attempt | None, bool]:
        """(the failed attempt, or None when it is answered; whether its stream will be cut)."""
        profile, now = offering.profile, self.clock.t
        for incident in active_incidents(profile, self.clock):  # type: ignore[arg-type]
            if incident.kind == "outage":
                return Attempt(int(incident.fault.removeprefix("http_") or 503), ERROR_S, 1.0), False
        fault = self.fleet.faults.pick(offering.spec.provider, offering.names, profile, draws, now)
        if fault is None or fault.kind in ("slow_drip", "stall_mid_stream", "stream_cut"):
            return None, fault is not None and fault.kind == "stream_cut"  # answered (a cut one breaks later)
        if fault.kind.startswith("http_"):
            status = int(fault.kind.removeprefix("http_"))
            return Attempt(status, ERROR_S, 1.0 if status in (429, 503, 529) else None), False
        if fault.kind == "stall_before_first_token":
            return Attempt(0, STALL_DEADLINE_S), False
        return Attempt(0, ERROR_S), False  # connection refused or reset

    def _answer(
        self, offering: Offering, prompt: Prompt, draws: Draws, headers: LimitHeaders | None, *, cut: bool
    ) -> Attempt:
        spec, profile, now = offering.spec, offering.profile, self.clock.t
        cache = self.fleet.cache.apply(
            offering.key.encode(), prompt, policy=spec.cache_policy, spec=profile.cache, ttl_s=spec.cache_ttl_s, now=now
        )
        max_tokens = min(prompt.max_tokens or 4096, spec.max_output)
        answer = completion.build(prompt, profile, draws, max_tokens=max_tokens, tool_id_prefix="call_")
        truth = SimUsage(
            prompt.tokens, cache.read, cache.write_5m, cache.write_1h, answer.output_tokens, answer.reasoning_tokens
        )
        reported = truth.inflated(profile.dishonesty.token_overreport)
        incidents = active_incidents(profile, self.clock)  # type: ignore[arg-type]
        timing = draw_timing(profile, self.clock, draws, uncached_tokens=truth.input_uncached, incidents=incidents)  # type: ignore[arg-type]
        hop = self.fleet.network.hop(REGION, spec.provider, draws)
        ttft = timing.ttft_s + (hop.delay_ms / 1000.0 if hop else 0.0)
        wait = self._queue(offering, now, ttft + timing.generation_s(truth.output))  # busy until its last byte
        generation = timing.generation_s(truth.output)
        return Attempt(
            200,
            wait + ttft,
            None,
            headers,
            truth,
            reported.cost(offering.billed),
            truth.cost(spec.prices),
            cut,
            generation,
        )

    def _queue(self, offering: Offering, now: float, busy_s: float) -> float:
        """Seconds this request waits for one of the offering's concurrent slots (``perf.capacity``)."""
        ends = self._busy.setdefault(offering.key, [])
        while ends and ends[0] <= now:
            heapq.heappop(ends)
        wait = 0.0
        if len(ends) >= max(1, offering.profile.perf.capacity):
            wait = heapq.heappop(ends) - now
        heapq.heappush(ends, now + wait + busy_s)
        return wait
