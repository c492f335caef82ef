"""The platform's Prometheus page: each domain's figures (foundation: workers and tasks; metering: billing
lag, dead letters, Stripe sync, reconciliation; evaluation: probe freshness) on one collector, computed when
scraped, served at ``GET /metrics`` of the web process beside the gateway's own metrics (routing.telemetry.metrics:
same process, same registry) and by each worker that has ``TOKENWAY_METRICS_PORT``
(foundation.task_metrics). Alerts worth having: docs/operations.md.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

from contracts.metrics_access import CONTENT_TYPE, metrics_allowed
from evaluation.ops_figures import probe_figures
from foundation.ops_metrics import DependencyCollector, worker_figures
from foundation.process_page import process_page_set
from foundation.redis_client import get_redis
from metering.ops_figures import billing_figures, usage_figures
from routing.telemetry.metrics import GATEWAY_REGISTRY, merged

PLATFORM_REGISTRY = CollectorRegistry(auto_describe=False)
PLATFORM_REGISTRY.register(
    DependencyCollector(
        redis_parts=[usage_figures, worker_figures], database_parts=[billing_figures, probe_figures], client=get_redis
    )
)

# This process's figures (Python process and GC), the platform's, and the gateway's when it runs here.
PAGE = merged(REGISTRY, PLATFORM_REGISTRY, GATEWAY_REGISTRY)
process_page_set(PAGE)


def metrics_view(request: HttpRequest) -> HttpResponse:
    allowed = metrics_allowed(
        client_host=request.META.get("REMOTE_ADDR"),
        authorization=request.headers.get("Authorization", ""),
        token=settings.METRICS_TOKEN,
    )
    if not allowed:
        return HttpResponse("metrics: loopback or bearer token only\n", status=403, content_type="text/plain")
    return HttpResponse(generate_latest(PAGE), content_type=CONTENT_TYPE)
