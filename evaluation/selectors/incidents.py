"""Change-point incidents as the public API and the trend chart list them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from django.utils import timezone

from evaluation.models import ALL_REGIONS, Incident

RECENT_INCIDENTS = dt.timedelta(days=7)


@dataclass(frozen=True, slots=True)
class IncidentRow:
    id: int
    offering_id: int
    region: str
    metric: str
    direction: str
    opened_at: str  # ISO 8601
    closed_at: str | None  # None while open
    baseline: float
    observed: float

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "offering_id": self.offering_id,
            "region": self.region,
            "metric": self.metric,
            "direction": self.direction,
            "opened_at": self.opened_at,
            "closed_at": self.closed_at,
            "baseline": self.baseline,
            "observed": self.observed,
        }


def _row(incident: Incident) -> IncidentRow:
    return IncidentRow(
        id=incident.pk,
        offering_id=incident.offering_id,
        region=incident.region,
        metric=incident.metric,
        direction=incident.direction,
        opened_at=incident.opened_at.isoformat(),
        closed_at=incident.closed_at.isoformat() if incident.closed_at else None,
        baseline=incident.baseline,
        observed=incident.observed,
    )


def incidents_list(
    *,
    state: str = "open",
    offering_ids: Iterable[int] | None = None,
    region: str = ALL_REGIONS,
    now: dt.datetime | None = None,
) -> list[IncidentRow]:
    """Incidents newest first: open ones, or (state "all") every one opened in the last 7 days or still open."""
    qs = Incident.objects.order_by("-opened_at", "-id")
    if state == "open":
        qs = qs.filter(closed_at__isnull=True)
    else:
        since = (now or timezone.now()) - RECENT_INCIDENTS
        qs = qs.filter(opened_at__gte=since) | qs.filter(closed_at__isnull=True)
    if offering_ids is not None:
        qs = qs.filter(offering_id__in=list(offering_ids))
    if region != ALL_REGIONS:
        qs = qs.filter(region=region)
    return [_row(incident) for incident in qs]
