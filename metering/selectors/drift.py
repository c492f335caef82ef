"""Per offering: what providers bill against our count, the over-counts charged on the true count and the
disputes booked (the operators' billing dashboard; metering.provider_truth computes them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from metering.provider_truth import DRIFT_SHARE, offering_drift

DRIFT_SHOWN = 50  # offerings on the dashboard, drifting ones first


def provider_drift(*, since: datetime) -> list[dict[str, Any]]:
    rows = sorted(
        offering_drift(since=since), key=lambda d: (not d.drifting, -abs(d.booked_micros - d.computed_micros))
    )
    return [
        {"offering_id": d.offering_id, "provider": d.provider, "model": d.model, "requests": d.requests,
         "computed_micros": d.computed_micros, "booked_micros": d.booked_micros,
         "drift_pct": round((d.ratio - 1) * 100, 2) if d.computed_micros else None, "drifting": d.drifting,
         "corrected": d.corrected, "disputed_micros": d.disputed_micros, "tolerance_pct": DRIFT_SHARE * 100}
        for d in rows[:DRIFT_SHOWN]
    ]  # fmt: skip
