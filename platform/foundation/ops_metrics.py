"""The platform's Prometheus figures, computed when scraped: each domain gives the parts it owns
(``metering.ops_figures``, ``evaluation.ops_figures``, the workers here), the project package puts them on
one collector (``tokenway.metrics``). Parts read Redis or the database; each dependency reports on its own:
Redis down leaves the database figures, and the reverse, and ``tokenway_dependency_up`` says which."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator

import redis
from django.db import DatabaseError, connection
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from foundation.task_metrics import task_cpu, task_outcomes
from foundation.worker_heartbeat import workers_alive

log = logging.getLogger(__name__)

Family = GaugeMetricFamily | CounterMetricFamily
RedisPart = Callable[[redis.Redis], Iterable[Family]]
DatabasePart = Callable[[], Iterable[Family]]


def gauge(name: str, doc: str, value: float, labels: dict[str, str] | None = None) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=list(labels or {}))
    family.add_metric(list((labels or {}).values()), value)
    return family


def worker_figures(client: redis.Redis) -> Iterator[Family]:
    """Live workers (their heartbeats), task runs by final state and their CPU (every worker's, counted in Redis)."""
    yield gauge("tokenway_workers_alive", "Celery workers with a fresh heartbeat.", workers_alive(client))
    tasks = CounterMetricFamily(
        "tokenway_celery_tasks", "Celery task runs by task and final state.", labels=["task", "state"]
    )
    for (name, state), count in sorted(task_outcomes(client).items()):
        tasks.add_metric([name, state], count)
    yield tasks
    cpu = CounterMetricFamily(
        "tokenway_celery_task_cpu_seconds", "CPU seconds Celery task runs took, by task.", labels=["task"]
    )
    for name, seconds in sorted(task_cpu(client).items()):
        cpu.add_metric([name], seconds)
    yield cpu


class DependencyCollector(Collector):
    """The Redis parts, then the database parts, each group skipped (and reported down) on its own."""

    def __init__(
        self, *, redis_parts: list[RedisPart], database_parts: list[DatabasePart], client: Callable[[], redis.Redis]
    ) -> None:
        self.redis_parts = redis_parts
        self.database_parts = database_parts
        self.client = client

    def describe(self) -> list[GaugeMetricFamily]:
        return []  # registered without a scrape; the families appear when collected

    def collect(self) -> Iterator[Family]:
        up = GaugeMetricFamily("tokenway_dependency_up", "1 when the platform reached it.", labels=["dependency"])
        try:
            client = self.client()
            for redis_part in self.redis_parts:
                yield from redis_part(client)
            up.add_metric(["redis"], 1)
        except redis.RedisError as exc:
            log.warning("metrics: redis figures skipped: %s", exc)
            up.add_metric(["redis"], 0)
        try:
            for database_part in self.database_parts:
                yield from database_part()
            up.add_metric(["postgresql"], 1)
        except DatabaseError as exc:
            log.warning("metrics: database figures skipped: %s", exc)
            up.add_metric(["postgresql"], 0)
        finally:
            # A worker's metrics port serves each scrape on a new thread: its connection must not outlive it.
            if not connection.in_atomic_block:
                connection.close()
        yield up
