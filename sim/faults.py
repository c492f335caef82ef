"""Faults: per-profile rates plus rules injected at runtime through POST /_sim/faults."""

from __future__ import annotations

from dataclasses import dataclass

from sim.draws import Draws
from sim.profiles import FAULT_KINDS, Profile

OVERREPORT_FACTOR = 1.15  # a token_overreport fault without a factor: the dishonest reseller's 15 %


@dataclass(slots=True)
class FaultRule:
    provider: str
    kind: str
    model: str | None = None  # public model slug or upstream name; None = every offering
    rate: float = 1.0
    count: int | None = None  # fire at most this many times
    until: float | None = None  # sim time after which the rule expires
    stall_s: float | None = None
    factor: float | None = None  # token_overreport: reported = true x factor (default OVERREPORT_FACTOR)

    def matches(self, provider: str, names: tuple[str, str], now: float) -> bool:
        if self.provider not in (provider, "*"):
            return False
        if self.model is not None and self.model not in names:
            return False
        return (self.until is None or now < self.until) and (self.count is None or self.count > 0)


@dataclass(frozen=True, slots=True)
class Fault:
    kind: str
    stall_s: float
    factor: float = OVERREPORT_FACTOR

    @property
    def overreport(self) -> float:
        """How much more than it used this answer reports (1.0 unless the fault is token_overreport)."""
        return self.factor if self.kind == "token_overreport" else 1.0


class FaultBook:
    def __init__(self) -> None:
        self.rules: list[FaultRule] = []

    def clear(self) -> None:
        self.rules.clear()

    def add(self, rule: FaultRule) -> None:
        if rule.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {rule.kind!r}; one of {', '.join(FAULT_KINDS)}")
        self.rules.append(rule)

    def pick(self, provider: str, names: tuple[str, str], profile: Profile, draws: Draws, now: float) -> Fault | None:
        if self.rules:
            fault = self._from_rules(provider, names, profile, draws, now)
            if fault:
                return fault
        for kind, rate in profile.faults.items():
            if draws.chance(rate):
                return Fault(kind, profile.stall_s)
        return None

    def _from_rules(
        self, provider: str, names: tuple[str, str], profile: Profile, draws: Draws, now: float
    ) -> Fault | None:
        for rule in self.rules:
            if rule.matches(provider, names, now) and draws.chance(rule.rate):
                if rule.count is not None:
                    rule.count -= 1
                stall_s = profile.stall_s if rule.stall_s is None else rule.stall_s
                return Fault(rule.kind, stall_s, OVERREPORT_FACTOR if rule.factor is None else rule.factor)
        return None
