"""What the recovery test reads from the running stack: its catalog and statistics snapshots and the
gateway's shared live signals (Redis), the generation records naming the offering that served each
request (``GET /api/v1/generations``), and incidents (``GET /api/v1/leaderboard/incidents``)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import redis
import requests

from contracts import redis_keys as rk
from contracts.snapshot import CatalogSnapshot, OfferingStats, StatsSnapshot
from routing.failover.shared import LIVE_KEY
from tests.deployed.conftest import Stack
from tests.reliability.faults import stack_urls
from tests.reliability.load import Answer

SAMPLE_S = 5.0  # how often the watch reads the snapshots and live signals while a phase runs
PAGE = 100  # generation records per page (the API's maximum)


def stack_redis(stack: Stack) -> redis.Redis:
    return redis.Redis.from_url(stack_urls(stack)["REDIS_URL"], socket_timeout=5)


def catalog(client: redis.Redis) -> CatalogSnapshot:
    raw: Any = client.get(rk.CATALOG_SNAPSHOT)
    return CatalogSnapshot.from_json(raw)


def stats(client: redis.Redis) -> StatsSnapshot | None:
    raw: Any = client.get(rk.STATS_SNAPSHOT)
    return None if raw is None else StatsSnapshot.from_json(raw)


def live(client: redis.Redis) -> dict[str, float]:
    """The gateway's merged live signals: "<offering>:e|r|l|t|k" -> value."""
    raw: Any = client.hgetall(LIVE_KEY)
    return {k.decode(): float(v) for k, v in raw.items()}


@dataclass
class Sample:
    at: float  # monotonic
    stats: dict[int, OfferingStats]  # the gateway's region's figures
    live: dict[str, float]


@dataclass
class Watch:
    """Samples of what the router reads, taken while the test waits for the next phase."""

    client: redis.Redis
    region: str
    offerings: list[int]
    samples: list[Sample] = field(default_factory=list)

    def until(self, moment: float) -> None:
        while (left := moment - time.monotonic()) > 0:
            snapshot = stats(self.client)
            figures = {} if snapshot is None else snapshot.stats.get(self.region, {})
            kept = {oid: figures[str(oid)] for oid in self.offerings if str(oid) in figures}
            self.samples.append(Sample(time.monotonic(), kept, live(self.client)))
            time.sleep(min(SAMPLE_S, max(left, 0.0)))

    def last_before(self, moment: float) -> Sample | None:
        found = [s for s in self.samples if s.at <= moment]
        return found[-1] if found else None


def generations(stack: Stack, model: str, since: str) -> dict[str, dict[str, Any]]:
    """request id -> generation record of the stack key's requests for ``model`` finished since ``since``."""
    url, headers = f"{stack.base_url}/api/v1/generations", {"authorization": f"Bearer {stack.key}"}
    params: dict[str, Any] = {"model": model, "since": since, "limit": PAGE}
    out: dict[str, dict[str, Any]] = {}
    with requests.Session() as session:
        while True:
            response = session.get(url, params=params, headers=headers, timeout=30)
            response.raise_for_status()
            page = response.json()
            out.update((item["id"], item) for item in page["data"])
            if not page["has_more"]:
                return out
            params["cursor"] = page["next_cursor"]


def incidents(stack: Stack, offering_id: int) -> list[dict[str, Any]]:
    response = requests.get(
        f"{stack.base_url}/api/v1/leaderboard/incidents",
        params={"offering": str(offering_id), "state": "all"},
        timeout=30,
    )
    response.raise_for_status()
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def served_share(
    answers: Iterable[Answer], records: dict[str, dict[str, Any]], offering_id: int
) -> tuple[float | None, int]:
    """(share of the answered requests that ``offering_id`` served, how many were answered)."""
    ids = [a.request_id for a in answers if a.status == 200 and a.request_id in records]
    if not ids:
        return None, 0
    return sum(records[i]["offering_id"] == offering_id for i in ids) / len(ids), len(ids)


def in_window(answers: Iterable[Answer], start: float, seconds: float) -> list[Answer]:
    return [a for a in answers if start <= a.sent_at < start + seconds]
