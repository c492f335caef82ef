"""Aggregates per offering x region (and "all") x window, answered from the rollups.

A window is [start, end) with ``end`` the start of the current minute, so every window of one
refresh ends at the same instant, and ``start`` = end - span, except that the 7-day window starts at
the first whole hour after that (it is then read from day and hour rollups only, and minute rollups
are kept just two days). It is covered by whole days, then whole hours, then minutes
(``cover``), and the counters of those rollup rows are summed in one SQL statement; per region and
over all regions (GROUPING SETS). Sums are exact, so a window's figures equal a recompute from the
raw rows in it, and a shorter window's sample counts never exceed a longer one's.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from contracts.usage import Prices
from evaluation.models import ALL_REGIONS, Aggregate, ProbeRollup, Resolution
from evaluation.rollup_metrics import compute_from_counts
from evaluation.services.rollup import STEP, floor_to

WINDOWS = {
    "15m": dt.timedelta(minutes=15),
    "1h": dt.timedelta(hours=1),
    "24h": dt.timedelta(hours=24),
    "7d": dt.timedelta(days=7),
}
# Windows whose start is rounded up to a whole hour (at most 59 minutes shorter than their span).
HOUR_ALIGNED_START = frozenset({"7d"})
# Seconds between recomputations of a window's aggregates (0: every refresh, so all windows share an end).
WINDOW_REFRESH_S = {"15m": 0, "1h": 0, "24h": 0, "7d": 0}
_TABLE = ProbeRollup._meta.db_table
_COARSE_FIRST = (Resolution.DAY, Resolution.HOUR)

Key = tuple[int, str]  # (offering_id, region)
Piece = tuple[str, dt.datetime, dt.datetime]  # (resolution, from, to): rollup rows with bucket in [from, to)
Counts = dict[str, dict[str, float]]  # kind -> counter -> sum


def window_end(now: dt.datetime) -> dt.datetime:
    return floor_to(now, Resolution.MINUTE)


def window_start(window: str, end: dt.datetime) -> dt.datetime:
    start = end - WINDOWS[window]
    if window in HOUR_ALIGNED_START:
        floor = floor_to(start, Resolution.HOUR)
        start = floor if floor == start else floor + STEP[Resolution.HOUR]
    return start


def cover(start: dt.datetime, end: dt.datetime, coarsest: str = Resolution.DAY) -> list[Piece]:
    """Split [start, end) (minute-aligned) into whole days, whole hours and minutes, coarsest first.

    Every rollup row is complete as soon as its raw rows are written, so any period inside the
    window can be read at its coarsest resolution."""
    allowed = _COARSE_FIRST[_COARSE_FIRST.index(coarsest) :] if coarsest != Resolution.MINUTE else ()
    pieces: list[Piece] = []
    t = start
    while t < end:
        piece: Piece = (Resolution.MINUTE, t, min(end, floor_to(t, Resolution.HOUR) + STEP[Resolution.HOUR]))
        for resolution in allowed:
            step = STEP[resolution]
            if floor_to(t, resolution) == t and t + step <= end:
                piece = (resolution, t, t + step)
                break
        if pieces and pieces[-1][0] == piece[0] and pieces[-1][2] == piece[1]:
            pieces[-1] = (piece[0], pieces[-1][1], piece[2])
        else:
            pieces.append(piece)
        t = piece[2]
    return pieces


def _where(pieces: list[Piece]) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for resolution, lo, hi in pieces:
        clauses.append("(r.resolution = %s AND r.bucket >= %s AND r.bucket < %s)")
        params += [resolution, lo, hi]
    return " OR ".join(clauses) or "false", params


def window_counts(pieces: list[Piece], offering_ids: Iterable[int] | None = None) -> dict[Key, Counts]:
    """Summed counters per (offering, region) and (offering, "all") over the pieces."""
    where, params = _where(pieces)
    if offering_ids is not None:
        where = f"({where}) AND r.offering_id = ANY(%s)"
        params.append(list(offering_ids))
    sql = f"""
        SELECT r.offering_id, r.region, r.kind, e.key, sum(e.value::float8), GROUPING(r.region)
        FROM {_TABLE} r CROSS JOIN LATERAL jsonb_each_text(r.counts) e
        WHERE {where}
        GROUP BY GROUPING SETS ((r.offering_id, r.region, r.kind, e.key), (r.offering_id, r.kind, e.key))
    """  # noqa: S608 - only placeholders are interpolated
    out: dict[Key, Counts] = defaultdict(lambda: defaultdict(dict))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for oid, region, kind, key, total, over_regions in cursor.fetchall():
            out[(int(oid), ALL_REGIONS if over_regions else str(region))][str(kind)][str(key)] = float(total)
    return out


def window_is_stale(window: str, now: dt.datetime) -> bool:
    latest = (
        Aggregate.objects.filter(window=window).order_by("-computed_at").values_list("computed_at", flat=True).first()
    )
    return latest is None or (now - latest).total_seconds() >= WINDOW_REFRESH_S[window]


def aggregates_refresh(*, window: str, prices: dict[int, Prices], now: dt.datetime | None = None) -> int:
    """Replace the window's aggregates with ones from the rollups; returns how many (offering, region) pairs."""
    now = now or timezone.now()
    end = window_end(now)
    counts = window_counts(cover(window_start(window, end), end))
    rows = []
    for key, kinds in counts.items():
        computed = compute_from_counts(kinds, prices.get(key[0]))
        rows.append(
            Aggregate(
                offering_id=key[0],
                region=key[1],
                window=window,
                computed_at=now,
                n=computed.n,
                metrics=computed.metrics,
                flags=computed.flags,
            )
        )
    # Race: two refreshes may overlap; upserts on the unique key never collide, and each only
    # deletes rows older than its own start (pairs that vanished from the window).
    with transaction.atomic():
        Aggregate.objects.bulk_create(
            rows,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=["offering_id", "region", "window"],
            update_fields=["computed_at", "n", "metrics", "flags"],
        )
        Aggregate.objects.filter(window=window, computed_at__lt=now).delete()
    return len(rows)
