"""GET /metrics of the platform: billing lag, Stripe sync, probe freshness and task outcomes as an
operator's scraper reads them, and who may read them."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from contracts import redis_keys
from contracts.metrics_access import metrics_allowed
from evaluation.models import ProbeResult
from foundation.task_metrics import count_outcome
from metering.lag import usage_stream_lag
from metering.models import MeterEvent, MeterStatus

pytestmark = pytest.mark.django_db


def _samples(response) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.content.decode())
        for s in family.samples
    }


def test_billing_lag_is_the_age_of_the_oldest_event_not_yet_billed(redis_client):
    # A stream of its own: a metering consumer left running by another test must not take these entries.
    stream, group = "tw:test:usage-lag", redis_keys.USAGE_GROUP
    redis_client.xgroup_create(stream, group, id="0", mkstream=True)
    ten_s_ago = int(time.time() * 1000) - 10_000
    redis_client.xadd(stream, {"e": b"{}"}, id=f"{ten_s_ago}-0")
    redis_client.xadd(stream, {"e": b"{}"})
    lag = usage_stream_lag(redis_client, stream)
    assert (lag.length, lag.undelivered, lag.pending) == (2, 2, 0)
    assert 10 <= lag.oldest_unbilled_s < 30
    # Taken by the consumer but not acknowledged: still unbilled, now counted as pending.
    redis_client.xreadgroup(group, "c1", {stream: ">"}, count=1)
    taken = usage_stream_lag(redis_client, stream)
    assert (taken.undelivered, taken.pending) == (1, 1)
    assert 10 <= taken.oldest_unbilled_s < 30
    redis_client.xreadgroup(group, "c1", {stream: ">"})
    redis_client.xack(stream, group, *[e for e, _ in redis_client.xrange(stream)])
    assert usage_stream_lag(redis_client, stream).oldest_unbilled_s == 0


def test_the_page_reports_the_usage_stream(client, redis_client):
    redis_client.xadd(redis_keys.USAGE_STREAM, {"e": b"{}"})
    figures = _samples(client.get("/metrics"))
    assert figures[("tokenway_usage_stream_length", ())] >= 1
    assert figures[("tokenway_billing_lag_seconds", ())] >= 0


def test_the_page_reports_each_usage_shard_and_their_total(client, redis_client, monkeypatch):
    monkeypatch.setenv(redis_keys.USAGE_SHARDS_ENV, "3")
    streams = redis_keys.usage_streams(3)
    for stream, count in zip(streams, (2, 0, 3), strict=True):
        redis_client.xgroup_create(stream, redis_keys.USAGE_GROUP, id="0", mkstream=True)
        for _ in range(count):
            redis_client.xadd(stream, {"e": b"{}"})
    figures = _samples(client.get("/metrics"))
    per_shard = [figures[("tokenway_usage_shard_undelivered", (("stream", stream),))] for stream in streams]
    assert per_shard == [2, 0, 3]
    assert figures[("tokenway_usage_stream_undelivered", ())] == 5
    assert figures[("tokenway_usage_shard_lag_seconds", (("stream", streams[1]),))] == 0


def test_stripe_sync_probe_freshness_and_task_outcomes(client, tenant, redis_client):
    now = timezone.now()
    for n, status in enumerate([MeterStatus.PENDING, MeterStatus.PENDING, MeterStatus.REJECTED, MeterStatus.SENT]):
        MeterEvent.objects.create(
            identifier=f"gen-{n}",
            tenant=tenant,
            customer_id="cus_1",
            value=10,
            timestamp=now,
            status=status,
            created_at=now - dt.timedelta(seconds=40 * (n + 1)),
        )
    ProbeResult.objects.create(
        offering_id=1, region="beijing", kind="performance", started_at=now - dt.timedelta(seconds=90)
    )
    ProbeResult.objects.create(
        offering_id=1, region="chengdu", kind="performance", started_at=now - dt.timedelta(days=2)
    )
    count_outcome("metering.tasks.push_meter_events_task", "success", 0.25)
    count_outcome("metering.tasks.push_meter_events_task", "success", 0.5)
    count_outcome("metering.tasks.push_meter_events_task", "failure")
    figures = _samples(client.get("/metrics"))
    assert figures[("tokenway_stripe_meter_unsent", ())] == 2
    assert 80 <= figures[("tokenway_stripe_meter_lag_seconds", ())] < 100  # the older of the two unsent
    assert figures[("tokenway_stripe_meter_failed", (("status", "rejected"),))] == 1
    assert 90 <= figures[("tokenway_probe_age_seconds", (("region", "beijing"),))] < 120
    assert ("tokenway_probe_age_seconds", (("region", "chengdu"),)) not in figures  # older than a day: gone
    task = (("state", "success"), ("task", "metering.tasks.push_meter_events_task"))
    assert figures[("tokenway_celery_tasks_total", task)] == 2
    cpu = ("tokenway_celery_task_cpu_seconds_total", (("task", "metering.tasks.push_meter_events_task"),))
    assert figures[cpu] == 0.75  # the CPU its runs took (a run without a start reading adds none)
    assert figures[("tokenway_dependency_up", (("dependency", "postgresql"),))] == 1


def test_only_loopback_or_the_bearer_token_may_read(client, settings, redis_client):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 403
    settings.METRICS_TOKEN = "scrape-" + "x" * 20
    assert client.get("/metrics").status_code == 403  # with a token, loopback alone is not enough
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    ok = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION=f"Bearer {settings.METRICS_TOKEN}")
    assert ok.status_code == 200


@pytest.mark.parametrize(
    ("host", "auth", "token", "allowed"),
    [
        ("127.0.0.1", "", "", True),
        ("::1", "", "", True),
        ("10.0.0.2", "", "", False),
        (None, "", "", False),
        ("not-an-ip", "", "", False),
        ("10.0.0.2", "Bearer t0ken", "t0ken", True),
        ("10.0.0.2", "bearer t0ken", "t0ken", True),
        ("127.0.0.1", "Basic t0ken", "t0ken", False),
    ],
)
def test_metrics_access_rule(host, auth, token, allowed):
    assert metrics_allowed(client_host=host, authorization=auth, token=token) is allowed


def test_the_web_page_carries_the_gateway_running_in_the_same_process(client, redis_client):
    """make run: one process serves the console and the gateway; its /metrics shows both."""
    from routing.telemetry.metrics import observe_request

    observe_request("/v1/messages", 429, 0.01)
    figures = _samples(client.get("/metrics"))
    assert figures[("tokenway_gateway_requests_total", (("endpoint", "/v1/messages"), ("status", "429")))] >= 1
    assert ("tokenway_usage_stream_length", ()) in figures


def test_a_worker_serves_its_own_page_on_its_loopback_port(monkeypatch, redis_client):
    import requests

    from devtools.ports import free_port
    from foundation.task_metrics import serve_process_metrics

    port = free_port()
    monkeypatch.setenv("TOKENWAY_METRICS_PORT", str(port))
    server = serve_process_metrics()
    try:
        response = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
    finally:
        server.shutdown()
        server.server_close()
    assert response.status_code == 200
    assert "tokenway_billing_lag_seconds" in response.text and "process_cpu_seconds_total" in response.text
