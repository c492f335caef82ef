"""Rollups of probe rows per offering x region x kind x minute, hour and day.

Kept up to date as results are written: ``rollups_add`` adds the counters of new raw rows to their
minute, hour and day rows (an upsert summing JSON counters, ``tw_jsonb_sum``) in the same
transaction as the raw insert, so rollups and raw rows never disagree, whatever the delay between
a probe's start (its bucket) and its write. ``rollups_rebuild`` recomputes a range in SQL from the
raw rows (first refresh after an upgrade, tests, benchmarks); its counters equal
``rollup_metrics.row_counts`` summed over the same rows.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from evaluation.models import DirtyOffering, ProbeResult, ProbeRollup, Resolution, RollupBackfill, Window, WindowState
from evaluation.probes.availability import DOWN_CLASSES
from evaluation.rollup_metrics import row_counts
from evaluation.stats.sketch import GAMMA, MIN_VALUE

# The first refresh after an upgrade rolls up this much raw history (the raw retention keeps 8 days).
REBUILD_HORIZON = dt.timedelta(days=8)
STEP: dict[str, dt.timedelta] = {
    Resolution.MINUTE: dt.timedelta(minutes=1),
    Resolution.HOUR: dt.timedelta(hours=1),
    Resolution.DAY: dt.timedelta(days=1),
}
FINER: dict[str, str] = {Resolution.HOUR: Resolution.MINUTE, Resolution.DAY: Resolution.HOUR}
ORIGIN = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)  # a Monday at midnight UTC: periods align to UTC
_TABLE = ProbeRollup._meta.db_table

_BIN = "ceil(ln(greatest({x}, %(min)s)) / %(ln_gamma)s)::bigint"
_CACHE_OK = "r.error_class = '' AND r.input_tokens > 0 AND r.variant IN ('plain', 'billing', 'stripped')"
_PRICE_OK = "r.error_class = '' AND r.details ? 'token_overcount'"


def _ratio(top: str, bottom: str) -> str:
    return f"(r.details->>'{top}')::float8 / nullif((r.details->>'{bottom}')::float8, 0)"


# Per probe kind: (counter name or NULL, value) for one raw row; the twin of rollup_metrics.row_counts.
_PAIRS = {
    "performance": [
        ("CASE WHEN r.error_class = ANY(%(down)s) THEN 'down' END", "1.0"),
        ("CASE WHEN r.error_class <> '' THEN 'err' END", "1.0"),
        (
            "CASE WHEN r.error_class = '' AND r.ttft_ms IS NOT NULL AND r.variant IN ('1k', '10k') THEN "
            f"(CASE r.variant WHEN '1k' THEN 't1:' ELSE 't10:' END) || {_BIN.format(x='r.ttft_ms')} END",
            "1.0",
        ),
        (f"CASE WHEN r.error_class = '' AND r.tps IS NOT NULL THEN 'tps:' || {_BIN.format(x='r.tps')} END", "1.0"),
        (
            "CASE WHEN r.error_class = '' AND r.answer_ttft_ms IS NOT NULL AND r.variant = '1k' THEN "
            f"'a1:' || {_BIN.format(x='r.answer_ttft_ms')} END",
            "1.0",
        ),
    ],
    "cache": [
        (f"CASE WHEN {_CACHE_OK} THEN r.variant || '.k' END", "1.0"),
        (f"CASE WHEN {_CACHE_OK} THEN r.variant || '.i' END", "r.input_tokens::float8"),
        (f"CASE WHEN {_CACHE_OK} THEN r.variant || '.c' END", "coalesce(r.cached_tokens, 0)::float8"),
        (f"CASE WHEN {_CACHE_OK} THEN r.variant || '.ii' END", "r.input_tokens::float8 * r.input_tokens"),
        (
            f"CASE WHEN {_CACHE_OK} THEN r.variant || '.cc' END",
            "coalesce(r.cached_tokens, 0)::float8 * coalesce(r.cached_tokens, 0)",
        ),
        (f"CASE WHEN {_CACHE_OK} THEN r.variant || '.ic' END", "r.input_tokens::float8 * coalesce(r.cached_tokens, 0)"),
    ],
    "price": [
        (f"CASE WHEN {_PRICE_OK} THEN 'chk' END", "1.0"),
        (f"CASE WHEN {_PRICE_OK} AND coalesce((r.details->>'token_overcount')::boolean, false) THEN 'ovc' END", "1.0"),
        (f"CASE WHEN {_PRICE_OK} AND coalesce((r.details->>'price_mismatch')::boolean, false) THEN 'mis' END", "1.0"),
        (
            f"CASE WHEN {_PRICE_OK} AND {_ratio('reported_input', 'counted_input')} IS NOT NULL THEN "
            f"'ocf:' || {_BIN.format(x=_ratio('reported_input', 'counted_input'))} END",
            "1.0",
        ),
        (
            f"CASE WHEN {_PRICE_OK} AND {_ratio('reported_cost', 'expected_cost')} IS NOT NULL THEN "
            f"'bil:' || {_BIN.format(x=_ratio('reported_cost', 'expected_cost'))} END",
            "1.0",
        ),
    ],
    "quality": [
        ("CASE WHEN r.details ? 'total' THEN 'cor' END", "(r.details->>'correct')::float8"),
        ("CASE WHEN r.details ? 'total' THEN 'tot' END", "(r.details->>'total')::float8"),
    ],
    "capability": [("CASE WHEN r.error_class <> '' AND NOT r.error_class = ANY(%(down)s) THEN 'fail' END", "1.0")],
}


def _kind_pairs(kind: str) -> str:
    values = ", ".join(f"({k}, {v})" for k, v in [("'n'", "1.0"), *_PAIRS[kind]])
    return f"""
    SELECT r.offering_id, r.region, r.kind, date_trunc('minute', r.started_at) AS minute, t.k AS key, t.v::float8 AS value
    FROM evaluation_proberesult r CROSS JOIN LATERAL (VALUES {values}) AS t (k, v)
    WHERE r.kind = '{kind}' AND t.k IS NOT NULL AND r.started_at >= %(since)s AND r.started_at < %(until)s"""  # noqa: S608 - constants only


_MINUTES_SQL = f"""
INSERT INTO {_TABLE} (offering_id, region, kind, resolution, bucket, counts)
SELECT offering_id, region, kind, 'm', minute, jsonb_object_agg(key, total)
FROM (
    SELECT offering_id, region, kind, minute, key, sum(value) AS total
    FROM ({" UNION ALL ".join(_kind_pairs(kind) for kind in _PAIRS)}) pairs
    GROUP BY 1, 2, 3, 4, 5
) s
GROUP BY offering_id, region, kind, minute
"""  # noqa: S608 - constants only

_PERIODS_SQL = f"""
INSERT INTO {_TABLE} (offering_id, region, kind, resolution, bucket, counts)
SELECT offering_id, region, kind, %(resolution)s, period, jsonb_object_agg(key, total)
FROM (
    SELECT r.offering_id, r.region, r.kind, date_bin(%(step)s, r.bucket, %(origin)s) AS period, e.key,
           sum(e.value::float8) AS total
    FROM {_TABLE} r CROSS JOIN LATERAL jsonb_each_text(r.counts) e
    WHERE r.resolution = %(finer)s AND r.bucket >= %(since)s AND r.bucket < %(until)s
    GROUP BY 1, 2, 3, 4, 5
) s
GROUP BY offering_id, region, kind, period
"""  # noqa: S608 - the table name only


def _params() -> dict[str, Any]:
    return {"down": sorted(str(c) for c in DOWN_CLASSES), "min": MIN_VALUE, "ln_gamma": math.log(GAMMA)}


def floor_to(moment: dt.datetime, resolution: str) -> dt.datetime:
    step = STEP[resolution]
    return ORIGIN + step * ((moment - ORIGIN) // step)


# --- written with the raw rows ------------------------------------------------------------------

RollupKey = tuple[str, dt.datetime, int, str, str]  # resolution, bucket, offering, region, kind

_UPSERT_SQL = f"""
INSERT INTO {_TABLE} (resolution, bucket, offering_id, region, kind, counts)
SELECT * FROM unnest(%s::varchar[], %s::timestamptz[], %s::bigint[], %s::varchar[], %s::varchar[], %s::jsonb[])
ON CONFLICT (resolution, bucket, offering_id, region, kind)
DO UPDATE SET counts = tw_jsonb_sum({_TABLE}.counts, EXCLUDED.counts)
"""  # noqa: S608 - the table name only


def rollup_deltas(rows: Iterable[ProbeResult]) -> dict[RollupKey, dict[str, float]]:
    out: dict[RollupKey, dict[str, float]] = defaultdict(dict)
    for r in rows:
        counts = row_counts(
            r.kind,
            r.variant,
            r.error_class,
            r.ttft_ms,
            r.tps,
            r.input_tokens,
            r.cached_tokens,
            r.details,
            answer_ttft_ms=r.answer_ttft_ms,
        )
        for resolution in STEP:
            target = out[(resolution, floor_to(r.started_at, resolution), r.offering_id, r.region, r.kind)]
            for name, value in counts.items():
                target[name] = target.get(name, 0.0) + value
    return out


def rollups_add(rows: Iterable[ProbeResult]) -> int:
    """Add the rows' counters to their rollups and mark their offerings changed for every window (call
    inside the transaction that inserts the rows).

    Keys are upserted in sorted order, so two writers touching the same rollup rows lock them in the
    same order and cannot deadlock."""
    import orjson

    deltas = sorted(rollup_deltas(rows).items())
    if not deltas:
        return 0
    columns: list[list[object]] = [[], [], [], [], [], []]
    for (resolution, bucket, oid, region, kind), counts in deltas:
        for column, value in zip(
            columns, (resolution, bucket, oid, region, kind, orjson.dumps(counts).decode()), strict=True
        ):
            column.append(value)
    offerings = sorted({key[2] for key, _ in deltas})
    windows = [w for w in Window.values for _ in offerings]
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT_SQL, columns)
        cursor.execute(_DIRTY_SQL, [windows, offerings * len(Window.values)])
    return len(deltas)


_DIRTY_SQL = f"""
INSERT INTO {DirtyOffering._meta.db_table} ("window", offering_id)
SELECT * FROM unnest(%s::varchar[], %s::bigint[])
ON CONFLICT ("window", offering_id) DO NOTHING
"""  # noqa: S608 - the table name only


# --- rebuilt from raw rows ----------------------------------------------------------------------


def build_minutes(since: dt.datetime, until: dt.datetime) -> int:
    """Replace the minute rollups in [since, until) (minute-aligned) with ones computed from raw rows."""
    with transaction.atomic(), connection.cursor() as cursor:
        ProbeRollup.objects.filter(resolution=Resolution.MINUTE, bucket__gte=since, bucket__lt=until).delete()
        cursor.execute(_MINUTES_SQL, {**_params(), "since": since, "until": until})
        return int(cursor.rowcount)


def build_periods(resolution: str, since: dt.datetime, until: dt.datetime) -> int:
    """Replace the hour (or day) rollups in [since, until) (aligned) with sums of the finer ones."""
    with transaction.atomic(), connection.cursor() as cursor:
        ProbeRollup.objects.filter(resolution=resolution, bucket__gte=since, bucket__lt=until).delete()
        params: dict[str, Any] = {
            "resolution": resolution,
            "finer": FINER[resolution],
            "step": STEP[resolution],
            "origin": ORIGIN,
            "since": since,
            "until": until,
        }
        cursor.execute(_PERIODS_SQL, params)
        return int(cursor.rowcount)


@dataclass(frozen=True, slots=True)
class RebuildReport:
    since: dt.datetime
    until: dt.datetime
    rows: dict[str, int]  # resolution -> rollup rows written


def rollups_rebuild(since: dt.datetime, until: dt.datetime) -> RebuildReport:
    """Recompute every rollup of the whole days covering [since, until) from the raw rows.

    Writers wait while it runs (the rollup table is locked), so none of their counters is lost or
    counted twice."""
    day = STEP[Resolution.DAY]
    since = floor_to(since, Resolution.DAY)
    until = floor_to(until - dt.timedelta(microseconds=1), Resolution.DAY) + day
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {_TABLE} IN EXCLUSIVE MODE")
        rows: dict[str, int] = {
            Resolution.MINUTE: build_minutes(since, until),
            Resolution.HOUR: build_periods(Resolution.HOUR, since, until),
            Resolution.DAY: build_periods(Resolution.DAY, since, until),
        }
        WindowState.objects.all().delete()  # the next refresh of every window is a full one
    return RebuildReport(since, until, rows)


def rollups_backfill(*, now: dt.datetime) -> RebuildReport | None:
    """Once (the first refresh after rollups were introduced): roll up the raw history still kept."""
    if RollupBackfill.objects.exists():
        return None
    report = rollups_rebuild(now - REBUILD_HORIZON, now + dt.timedelta(minutes=1))
    RollupBackfill.objects.create(since=report.since, until=report.until, done_at=now)
    return report
