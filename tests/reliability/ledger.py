"""What the books say about the requests a load run got 200 for: lost (never recorded) and double-billed."""

from __future__ import annotations

import time

import psycopg

from tests.waiting import poll_until

SETTLE_TIMEOUT_S = 90.0  # the consumer catching up after a fault, Redis replay of spools included


def _counts(db_url: str, request_ids: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    with psycopg.connect(db_url, autocommit=True, connect_timeout=5) as conn:
        usage = conn.execute(
            "SELECT request_id, count(*) FROM metering_usagerecord WHERE request_id = ANY(%s) GROUP BY request_id",
            (request_ids,),
        ).fetchall()
        journals = conn.execute(
            "SELECT key, count(*) FROM metering_journal WHERE key = ANY(%s) GROUP BY key",
            ([f"usage:{rid}" for rid in request_ids],),
        ).fetchall()
    return dict(usage), dict(journals)


def lost_and_double_billed(db_url: str, request_ids: list[str]) -> tuple[int, int, float]:
    """Waits until every id is recorded (or the timeout); returns (lost, double-billed, seconds waited)."""
    started = time.monotonic()
    seen: list[tuple[int, int]] = []

    def settled() -> bool:
        try:
            usage, journals = _counts(db_url, request_ids)
        except psycopg.OperationalError:
            usage, journals = {}, {}
        lost = sum(1 for rid in request_ids if rid not in usage)
        double = sum(1 for n in usage.values() if n > 1) + sum(1 for n in journals.values() if n > 1)
        seen.append((lost, double))
        return lost == 0

    poll_until(settled, timeout=SETTLE_TIMEOUT_S, interval=0.5)
    lost, double = seen[-1]
    return lost, double, time.monotonic() - started


def lost_detail(stack: object, db_url: str, request_ids: list[str]) -> str:
    """For a failure message: which ids are missing, and whether the gateway handed them to Redis."""
    from tests.reliability.faults import stream_request_ids

    usage, _ = _counts(db_url, request_ids)
    missing = [rid for rid in request_ids if rid not in usage]
    in_stream = stream_request_ids(stack, set(missing))  # type: ignore[arg-type]
    return f"lost {missing[:10]}; of those in the usage stream: {sorted(in_stream)[:10]}"
