"""The history the parts model's statistics refresh reads, synthesized in SQL (bench/probing_parts.py): 7 days
of day, hour and minute rollups and 25 minutes of raw performance rows for ``n`` offerings x :data:`REGIONS`,
in the shapes the write path leaves (per hour and pair: 24 performance probes, one of each hourly kind).

Imported after ``django.setup()`` (the parts model points DATABASE_URL at its own database first).
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from django.db import connection

from evaluation.models import ProbeRollup
from evaluation.services.aggregate import WINDOWS
from evaluation.services.rollup import floor_to
from evaluation.stats.sketch import GAMMA

REGIONS = ["beijing", "shanghai", "shenzhen", "chengdu"]

_FUNCTIONS = """
CREATE OR REPLACE FUNCTION pg_temp.normal() RETURNS float8 LANGUAGE sql VOLATILE AS
$$ SELECT sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) $$;

CREATE OR REPLACE FUNCTION pg_temp.perf(n int, med float8, lng float8) RETURNS jsonb LANGUAGE sql VOLATILE AS $$
    SELECT jsonb_object_agg(k, v) FROM (
        SELECT k, count(*)::float8 AS v FROM (
            SELECT CASE WHEN random() < 0.5
                        THEN 't1:' || ceil((ln(med) + 0.3 * pg_temp.normal()) / lng)::bigint
                        ELSE 't10:' || ceil((ln(med * 2.5) + 0.3 * pg_temp.normal()) / lng)::bigint END AS k
            FROM generate_series(1, n)
            UNION ALL
            SELECT 'tps:' || ceil(ln(greatest(60 + 5 * pg_temp.normal(), 1)) / lng)::bigint FROM generate_series(1, n)
        ) samples GROUP BY k
        UNION ALL SELECT 'n', n
    ) t
$$;

CREATE OR REPLACE FUNCTION pg_temp.small(kind text, h int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE kind
        WHEN 'cache' THEN jsonb_build_object('n', 12 * h,
            'plain.k', 3 * h, 'plain.i', 6000 * h, 'plain.c', 5000 * h, 'plain.ii', 1.2e7 * h,
            'plain.cc', 8.4e6 * h, 'plain.ic', 1.0e7 * h,
            'billing.k', 3 * h, 'billing.i', 6000 * h, 'billing.c', 5000 * h, 'billing.ii', 1.2e7 * h,
            'billing.cc', 8.4e6 * h, 'billing.ic', 1.0e7 * h,
            'stripped.k', 3 * h, 'stripped.i', 6000 * h, 'stripped.c', 5000 * h, 'stripped.ii', 1.2e7 * h,
            'stripped.cc', 8.4e6 * h, 'stripped.ic', 1.0e7 * h)
        WHEN 'price' THEN jsonb_build_object('n', h, 'chk', h, 'ocf.k', h, 'ocf.s', 0, 'ocf.ss', 0,
            'bil.k', h, 'bil.s', 0, 'bil.ss', 0)
        WHEN 'quality' THEN jsonb_build_object('n', h, 'cor', 5 * h, 'tot', 5 * h)
        ELSE jsonb_build_object('n', 2 * h) END
$$;
"""

_PAIRS = "generate_series(1, %(n)s) AS o, unnest(%(regions)s::text[]) WITH ORDINALITY AS x (region, ri)"
_KINDS = "unnest(ARRAY['cache', 'price', 'quality', 'capability']) WITH ORDINALITY AS k (kind, ki)"
_TABLE = ProbeRollup._meta.db_table


def _periods_sql(resolution: str, perf_n: int, small_h: int) -> str:
    return f"""
    INSERT INTO {_TABLE} (resolution, bucket, offering_id, region, kind, counts)
    SELECT '{resolution}', b, o, region, 'performance', pg_temp.perf({perf_n}, 300 + (o %% 20) * 50, %(lng)s)
    FROM unnest(%(buckets)s::timestamptz[]) AS b, {_PAIRS}
    UNION ALL
    SELECT '{resolution}', b, o, region, kind, pg_temp.small(kind, {small_h})
    FROM unnest(%(buckets)s::timestamptz[]) AS b, {_PAIRS}, {_KINDS}
    """


_MINUTES_SQL = f"""
INSERT INTO {_TABLE} (resolution, bucket, offering_id, region, kind, counts)
SELECT 'm', b, o, region, 'performance', pg_temp.perf(1, 300 + (o %% 20) * 50, %(lng)s)
FROM unnest(%(buckets)s::timestamptz[]) WITH ORDINALITY AS m (b, mi), {_PAIRS}
WHERE (o * 7 + ri * 3 + mi) %% 5 < 2
UNION ALL
SELECT 'm', b, o, region, kind, pg_temp.small(kind, 1)
FROM unnest(%(buckets)s::timestamptz[]) WITH ORDINALITY AS m (b, mi), {_PAIRS}, {_KINDS}
WHERE (o + ri * 17 + mi + ki * 13) %% 60 = 0
"""

_RAW_SQL = (
    """
INSERT INTO evaluation_proberesult
    (offering_id, region, kind, variant, started_at, ttft_ms, tps, total_ms, error_class, details)
SELECT o, region, 'performance', CASE WHEN s %% 2 = 0 THEN '1k' ELSE '10k' END,
       %(start)s::timestamptz + (s * interval '150 seconds') + ((o %% 150) * interval '1 second'),
       exp(ln(300 + (o %% 20) * 50) + 0.3 * pg_temp.normal()), 60 + 5 * pg_temp.normal(), 4000, '', '{}'::jsonb
FROM generate_series(0, 9) AS s, """
    + _PAIRS
)


def _hours(since: dt.datetime, until: dt.datetime) -> list[dt.datetime]:
    out, t = [], since
    while t < until:
        out.append(t)
        t += dt.timedelta(hours=1)
    return out


def synthesize_history(n: int, end: dt.datetime) -> dict[str, int]:
    """Day, hour and minute rollups the 15m/1h/24h/7d windows read, and 25 minutes of raw probes."""
    day, hour = floor_to(end, "d"), floor_to(end, "h")
    days = [day - dt.timedelta(days=d) for d in range(1, 9)]
    hours = sorted(
        {
            *_hours(hour - dt.timedelta(hours=48), hour),
            *_hours(floor_to(end - WINDOWS["7d"], "d"), floor_to(end - WINDOWS["7d"], "d") + dt.timedelta(days=1)),
        }
    )
    minutes = [end - dt.timedelta(minutes=m) for m in range(1, 121)]
    minutes += [end - dt.timedelta(hours=23) - dt.timedelta(minutes=m) for m in range(1, 121)]
    params: dict[str, Any] = {"n": n, "regions": REGIONS, "lng": math.log(GAMMA)}
    counts = {}
    with connection.cursor() as cursor:
        cursor.execute(_FUNCTIONS)
        cursor.execute(_periods_sql("d", 576, 24), {**params, "buckets": days})
        counts["day rows"] = cursor.rowcount
        cursor.execute(_periods_sql("h", 24, 1), {**params, "buckets": hours})
        counts["hour rows"] = cursor.rowcount
        cursor.execute(_MINUTES_SQL, {**params, "buckets": sorted(minutes)})
        counts["minute rows"] = cursor.rowcount
        cursor.execute(_RAW_SQL, {**params, "start": end - dt.timedelta(minutes=30)})
        counts["raw rows"] = cursor.rowcount
        cursor.execute(f"ANALYZE {_TABLE}; ANALYZE evaluation_proberesult")
    return counts
