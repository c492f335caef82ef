"""Aggregates per offering x region (and "all") x window, answered from the rollups.

A window is [start, end) with ``end`` the start of the current minute, so every window of one
refresh ends at the same instant, and ``start`` = end - span, except that the 7-day window starts at
the first whole hour after that (it is then read from day and hour rollups only, and minute rollups
are kept just two days). It is covered by whole days, then whole hours, then minutes
(``cover``), and the counters of those rollup rows are summed per region and over all regions.
Sums are exact, so a window's figures equal a recompute from the raw rows in it, and a shorter
window's sample counts never exceed a longer one's.

A refresh recomputes only the offerings whose samples in the window changed since the previous one
(``changed_offerings``); the others' figures are the same at the new end. ``WindowState`` holds
each window's end.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import orjson
from django.db import connection, transaction
from django.utils import timezone

from contracts.usage import Prices
from evaluation import conf
from evaluation.models import ALL_REGIONS, Aggregate, DirtyOffering, ProbeRollup, Resolution, WindowState
from evaluation.rules.from_counts import evaluate_counts
from evaluation.services.rollup import STEP, floor_to

WINDOWS = {
    "15m": dt.timedelta(minutes=15),
    "1h": dt.timedelta(hours=1),
    "24h": dt.timedelta(hours=24),
    "7d": dt.timedelta(days=7),
}
# Windows whose start is rounded up to a whole hour (at most 59 minutes shorter than their span).
HOUR_ALIGNED_START = frozenset({"7d"})
# Windows recomputed only every conf.long_window_refresh_s() seconds (0, the default: every refresh).
LONG_WINDOWS = frozenset({"24h", "7d"})
# Every window is recomputed in full this often (catalog prices feed effective_input_price); in between,
# only offerings whose samples changed.
FULL_EVERY = dt.timedelta(hours=1)

_TABLE = ProbeRollup._meta.db_table
_DIRTY = DirtyOffering._meta.db_table
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
    """Summed counters per (offering, region) and (offering, "all") over the pieces.

    The rows are summed here rather than in SQL: decoding each row's JSON once and adding dicts is
    2-3x cheaper than expanding every key with jsonb_each and grouping (measured, docs/evaluation.md)."""
    where, params = _where(pieces)
    if offering_ids is not None:
        where = f"({where}) AND r.offering_id = ANY(%s)"
        params.append(list(offering_ids))
    sql = f"SELECT r.offering_id, r.region, r.kind, r.counts::text FROM {_TABLE} r WHERE {where}"  # noqa: S608
    out: dict[Key, Counts] = defaultdict(lambda: defaultdict(dict))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for oid, region, kind, raw in cursor.fetchall():
            counts: dict[str, float] = orjson.loads(raw)
            for key in ((int(oid), str(region)), (int(oid), ALL_REGIONS)):
                target = out[key][str(kind)]
                for name, value in counts.items():
                    target[name] = target.get(name, 0.0) + value
    return out


def _offerings_in(pieces: list[Piece]) -> set[int]:
    if not pieces:
        return set()
    where, params = _where(pieces)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT r.offering_id FROM {_TABLE} r WHERE {where}", params)  # noqa: S608
        return {int(oid) for (oid,) in cursor.fetchall()}


def _take_dirty(window: str) -> set[int]:
    """Offerings written since the window's last refresh, unmarked (in a short transaction of its own,
    so writers marking the same offerings never wait for the refresh)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f'DELETE FROM {_DIRTY} WHERE "window" = %s RETURNING offering_id', [window])  # noqa: S608
        return {int(oid) for (oid,) in cursor.fetchall()}


def _mark_dirty(window: str, offering_ids: set[int]) -> None:
    DirtyOffering.objects.bulk_create(
        [DirtyOffering(window=window, offering_id=oid) for oid in offering_ids], ignore_conflicts=True
    )


def changed_offerings(window: str, state: WindowState, now: dt.datetime) -> set[int]:
    """Offerings whose samples entered [old end, new end) or left [old start, new start) of the window
    (rows written since the last refresh, late ones included, come from ``_take_dirty``)."""
    end = window_end(now)
    entered = cover(state.end, end) if state.end < end else []
    old_start, start = window_start(window, state.end), window_start(window, end)
    left = cover(old_start, start) if old_start < start else []
    return _offerings_in([*entered, *left])


def window_is_stale(window: str, now: dt.datetime) -> bool:
    period = conf.long_window_refresh_s() if window in LONG_WINDOWS else 0
    state = WindowState.objects.filter(window=window).first()
    return state is None or period <= 0 or (now - state.refreshed_at).total_seconds() >= period


def _needs_full(state: WindowState | None, now: dt.datetime) -> bool:
    return state is None or now < state.refreshed_at or now - state.full_at >= FULL_EVERY


def _computed(
    window: str, pieces: list[Piece], ids: set[int] | None, prices: dict[int, Prices], now: dt.datetime
) -> list[Aggregate]:
    counts = window_counts(pieces, offering_ids=ids) if ids != set() else {}
    rows = []
    for key, kinds in counts.items():
        computed = evaluate_counts(kinds, prices.get(key[0]))
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
    return rows


def aggregates_refresh(
    *, window: str, prices: dict[int, Prices], now: dt.datetime | None = None, full: bool = False
) -> int:
    """Bring the window's aggregates to now's end from the rollups; returns how many (offering, region)
    pairs were recomputed. Only offerings with changed samples are recomputed, except in a full
    refresh (the first, ``full=True``, or FULL_EVERY after the last full one: prices may have changed)."""
    now = now or timezone.now()
    end = window_end(now)
    state = WindowState.objects.filter(window=window).first()
    dirty = _take_dirty(window)
    try:
        full = full or _needs_full(state, now)
        ids = None if full or state is None else changed_offerings(window, state, now) | dirty
        rows = _computed(window, cover(window_start(window, end), end), ids, prices, now)
        with transaction.atomic():
            # Overlapping refreshes: upserts on the unique key never collide, and each deletes only
            # rows older than its own start (pairs that left the window).
            Aggregate.objects.bulk_create(
                rows,
                batch_size=1000,
                update_conflicts=True,
                unique_fields=["offering_id", "region", "window"],
                update_fields=["computed_at", "n", "metrics", "flags"],
            )
            stale = Aggregate.objects.filter(window=window, computed_at__lt=now)
            (stale if ids is None else stale.filter(offering_id__in=ids)).delete()
            WindowState.objects.update_or_create(
                window=window,
                defaults={"end": end, "refreshed_at": now, **({"full_at": now} if ids is None else {})},
                create_defaults={"end": end, "refreshed_at": now, "full_at": now},
            )
    except BaseException:
        _mark_dirty(window, dirty)  # taken but not refreshed: the next refresh takes them again
        raise
    return len(rows)
