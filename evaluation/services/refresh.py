"""One statistics refresh: rollups, aggregates (every window at one end), incidents, snapshot, live notification."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from celery import current_app
from django.utils import timezone

from contracts.redis_keys import BOARD_VISITED
from evaluation.models import Incident
from evaluation.offerings_to_probe import current_catalog
from evaluation.services.aggregate import WINDOWS, aggregates_refresh, window_is_stale
from evaluation.services.incidents import incidents_detect
from evaluation.services.leaderboard_push import leaderboard_notify
from evaluation.services.rollup import rollups_backfill
from evaluation.services.snapshot import build_snapshot, snapshot_publish
from foundation.redis_client import get_redis

logger = logging.getLogger(__name__)

# The frontend's task that renders the leaderboard's default views for a new version (named, not imported:
# evaluation does not import the frontend).
BOARD_PRERENDER_TASK = "frontend.board_prerender"


@dataclass(frozen=True, slots=True)
class RefreshReport:
    windows: dict[str, int]
    opened: int
    closed: int
    version: int


def stats_refresh(*, force: bool = False) -> RefreshReport:
    now = timezone.now()
    prices = {o.offering_id: o.prices for o in current_catalog().offerings}
    rollups_backfill(now=now)  # once, after an upgrade; results are rolled up as they are written
    windows = {
        w: aggregates_refresh(window=w, prices=prices, now=now, full=force)
        for w in WINDOWS
        if force or window_is_stale(w, now)
    }
    opened, closed = incidents_detect(now=now)
    snapshot = build_snapshot()
    version = snapshot_publish(client=get_redis(), snapshot=snapshot)
    leaderboard_notify(
        version=version,
        generated_at=snapshot.generated_at,
        incidents_open=Incident.objects.filter(closed_at__isnull=True).count(),
    )
    if board_visited():
        board_prerender_enqueue()
    return RefreshReport(windows=windows, opened=opened, closed=closed, version=version)


def board_visited() -> bool:
    """Whether a visitor read a leaderboard page lately (``BOARD_VISITED``): pre-rendering its default views
    costs a second of CPU or more, every 30 s, which a board nobody reads does not need (its first visitor
    renders the page they ask for, and from then on the publishes pre-render again)."""
    return bool(get_redis().exists(BOARD_VISITED))


def board_prerender_enqueue() -> None:
    """Ask a worker to render the leaderboard's default views of the version just published; a broker that
    does not answer costs the first visitors a cold page, never the publish. A process without the project's
    Celery app (no broker configured: a management command, a test) has no worker to ask."""
    if not current_app.conf.broker_url:
        return
    try:
        current_app.send_task(BOARD_PRERENDER_TASK, queue="default", retry=False)
    except Exception:  # any broker failure: the pages render on their first visit instead
        logger.warning("could not enqueue %s", BOARD_PRERENDER_TASK, exc_info=True)
