"""Behaviour profiles (sim/profiles.yaml): defaults <- provider <- per-offering override."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DEFAULT_PROFILES = Path(__file__).resolve().parent / "profiles.yaml"
FAULT_KINDS = (
    "http_429",
    "http_500",
    "http_502",
    "http_503",
    "http_529",
    "connection_refused",
    "connection_reset",
    "stall_before_first_token",
    "stall_mid_stream",
    "stream_cut",
    "slow_drip",
    "token_overreport",  # answers normally, reports (and bills) more tokens than it used: the rule's factor
)


@dataclass(frozen=True, slots=True)
class Perf:
    ttft_ms: float = 600.0  # median time to first token (lognormal)
    ttft_sigma: float = 0.3
    tokens_per_s: float = 60.0
    jitter: float = 0.15  # relative spread of inter-chunk gaps and of tokens/s per request
    capacity: int = 64  # concurrent slots; requests beyond wait (queueing shows in TTFT)
    prefill_ms_per_1k: float = 20.0  # extra TTFT per 1k uncached prompt tokens


@dataclass(frozen=True, slots=True)
class CacheProfile:
    mode: str = "automatic"  # automatic (prefix, OpenAI/DeepSeek) | explicit (cache_control breakpoints)
    min_tokens: int = 1024
    block_tokens: int = 128


@dataclass(frozen=True, slots=True)
class Dishonesty:
    token_overreport: float = 1.0  # reported usage = true usage x factor (rounded up)
    billed_price_factor: float = 1.0  # billed prices = published x factor (unless billed_prices given)
    billed_prices: dict[str, int] | None = None
    quantized: bool = False  # degraded variant
    wrong_answer_rate: float = 0.0  # chance a checkable task is answered wrongly


@dataclass(frozen=True, slots=True)
class Incident:
    kind: str = "degradation"  # degradation | outage
    duration_s: float = 600.0
    start_s: float | None = None  # sim seconds after fleet start
    daily_at: str | None = None  # "HH:MM" in the provider's time zone, every day
    ttft_factor: float = 1.0
    tps_factor: float = 1.0
    fault: str = "http_503"  # what an outage answers

    def active(self, *, now_s: float, minute_of_day: float) -> bool:
        if self.start_s is not None:
            return self.start_s <= now_s < self.start_s + self.duration_s
        if self.daily_at:
            hours, minutes = (int(part) for part in self.daily_at.split(":"))
            start = hours * 60 + minutes
            return (minute_of_day - start) % 1440 < self.duration_s / 60.0
        return False


@dataclass(frozen=True, slots=True)
class Profile:
    perf: Perf = field(default_factory=Perf)
    cache: CacheProfile = field(default_factory=CacheProfile)
    faults: dict[str, float] = field(default_factory=dict)
    stall_s: float = 30.0
    drip_factor: float = 20.0
    dishonesty: Dishonesty = field(default_factory=Dishonesty)
    drift: tuple[float, ...] = (1.0,) * 24
    tz_offset_h: float = 8.0
    incidents: tuple[Incident, ...] = ()
    error_style: str = "openai"
    ratelimit_headers: str = "openai"  # openai | anthropic | none
    require_auth: bool = False
    output_tokens: tuple[int, int] = (24, 160)
    reasoning: bool = False  # emits reasoning (reasoning_content / thinking) by default
    report_cost: bool = False  # usage.cost in USD, as aggregators do
    reasoning_field: str | None = "reasoning_content"  # None: reasoning is hidden, only counted


def _drift(raw: Any) -> tuple[float, ...]:
    if raw is None:
        return (1.0,) * 24
    if isinstance(raw, list):
        if len(raw) != 24:
            raise ValueError("drift list needs 24 hourly multipliers")
        return tuple(float(item) for item in raw)
    hours = [1.0] * 24
    for span, factor in raw.items():
        first, _, last = str(span).partition("-")
        for hour in range(int(first), int(last or first) + 1):
            hours[hour % 24] = float(factor)
    return tuple(hours)


def _faults(raw: dict[str, Any]) -> dict[str, float]:
    unknown = set(raw) - set(FAULT_KINDS)
    if unknown:
        raise ValueError(f"unknown fault kinds {sorted(unknown)}")
    return {kind: float(rate) for kind, rate in raw.items() if rate}


def profile_from_dict(raw: dict[str, Any]) -> Profile:
    out = raw.get("output_tokens") or {}
    return Profile(
        perf=Perf(**(raw.get("perf") or {})),
        cache=CacheProfile(**(raw.get("cache") or {})),
        faults=_faults(raw.get("faults") or {}),
        stall_s=float(raw.get("stall_s", 30.0)),
        drip_factor=float(raw.get("drip_factor", 20.0)),
        dishonesty=Dishonesty(**(raw.get("dishonesty") or {})),
        drift=_drift(raw.get("drift")),
        tz_offset_h=float(raw.get("tz_offset_h", 8.0)),
        incidents=tuple(Incident(**item) for item in raw.get("incidents") or ()),
        error_style=raw.get("error_style", "openai"),
        ratelimit_headers=raw.get("ratelimit_headers", "openai"),
        require_auth=bool(raw.get("require_auth", False)),
        output_tokens=(int(out.get("min", 24)), int(out.get("max", 160))),
        reasoning=bool(raw.get("reasoning", False)),
        report_cost=bool(raw.get("report_cost", False)),
        reasoning_field=raw.get("reasoning_field", "reasoning_content"),
    )


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and key != "drift":
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


class ProfileBook:
    """Raw profile documents; resolves the effective profile of one offering."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.defaults: dict[str, Any] = data.get("defaults") or {}
        self.providers: dict[str, dict[str, Any]] = data.get("providers") or {}

    def raw_for(self, provider: str, model: str) -> dict[str, Any]:
        provider_raw = dict(self.providers.get(provider) or {})
        offerings = provider_raw.pop("offerings", None) or {}
        merged = deep_merge(self.defaults, provider_raw)
        return deep_merge(merged, offerings.get(model) or {})

    def resolve(self, provider: str, model: str) -> Profile:
        return profile_from_dict(self.raw_for(provider, model))


def load_profiles(path: Path | str = DEFAULT_PROFILES) -> ProfileBook:
    return ProfileBook(yaml.safe_load(Path(path).read_text()) or {})
