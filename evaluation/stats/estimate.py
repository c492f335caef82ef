"""An estimate with its 95% confidence interval, as stored in aggregates and shown on the leaderboard."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054  # two-sided 95% normal quantile


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float
    lo: float
    hi: float
    n: int

    def as_dict(self) -> dict[str, Any]:
        return {"value": round(self.value, 6), "lo": round(self.lo, 6), "hi": round(self.hi, 6), "n": self.n}
