"""Every page of the site with the data that fills it: used by the zh-Hans completeness test (Django
client) and the browser matrix (each page × language × width)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from django.utils import timezone

from contracts.usage import Tokens
from metering.ingest import usage_ingest
from tests.factories import issue_key
from tests.metering.conftest import make_event

REQUEST_OK, REQUEST_REJECTED = "gen-site-ok", "gen-site-rejected"


@dataclass(frozen=True)
class SitePage:
    name: str
    url: str
    who: str  # "anonymous", "owner" or "staff"
    status: int = 200


def measure(
    offering, *, ttft: float, tps: float, n: int, region: str = "all", window: str = "24h", hit: float = 0.0, flags=()
):
    from evaluation.models import Aggregate

    metric = lambda v: {"value": v, "lo": v * 0.9, "hi": v * 1.1, "n": n}  # noqa: E731
    metrics = {
        "ttft_p50": metric(ttft), "ttft_p90": metric(ttft * 1.8), "tps": metric(tps), "availability": metric(0.995),
        "error_rate": metric(0.01), "cache_hit_ratio": metric(hit),
    }  # fmt: skip
    Aggregate.objects.update_or_create(
        offering_id=offering.pk,
        region=region,
        window=window,
        defaults={"computed_at": timezone.now(), "n": n, "metrics": metrics, "flags": list(flags)},
    )


def history(offerings, *, hours: int = 24, per_hour: int = 6) -> None:
    """Performance probes over the last hours (rolled up as the probe workers do), TTFT drifting
    apart per offering, and one incident on the first offering three hours ago."""
    import datetime as dt

    from django.db import transaction

    from evaluation.models import Incident, ProbeKind, ProbeResult
    from evaluation.services.rollup import rollups_add

    now = timezone.now()
    rows = [
        ProbeResult(
            offering_id=o.pk,
            region="beijing",
            kind=ProbeKind.PERFORMANCE,
            variant="1k",
            started_at=now - dt.timedelta(hours=h, minutes=10 * k),
            ttft_ms=300 + 150 * i + 8 * h + 5 * k,
            tps=60 - 8 * i + (h % 5),
            total_ms=2000,
            input_tokens=1000,
            output_tokens=200,
        )
        for i, o in enumerate(offerings)
        for h in range(hours)
        for k in range(per_hour)
    ]
    with transaction.atomic():
        ProbeResult.objects.bulk_create(rows)
        rollups_add(rows)
    Incident.objects.create(
        offering_id=offerings[0].pk,
        region="beijing",
        metric="ttft",
        direction="worse",
        opened_at=now - dt.timedelta(hours=3),
        baseline=320,
        observed=540,
    )


def embedding_offering():
    """An embedding model at its own provider, measured by the embedding probe: latency, availability and
    the vectors' length (the board's embedding view)."""
    import datetime as dt

    from catalog.models import Model, Offering, OfferingPrice, Provider
    from evaluation.models import Aggregate, ProbeKind, ProbeResult

    provider = Provider.objects.create(
        slug="openai", name="OpenAI", base_url="http://127.0.0.1:8100/openai/v1", dialect="openai"
    )
    model = Model.objects.create(
        slug="text-embedding-3-small", name="text-embedding-3-small", context_window=8192, max_output=1
    )
    offering = Offering.objects.create(
        model=model,
        provider=provider,
        upstream_model=model.slug,
        context_window=8192,
        max_output=1,
        parameters=["embeddings", "dimensions"],
    )
    OfferingPrice.objects.create(offering=offering, version=1, input=20_000, output=0)
    metric = lambda v, n=60: {"value": v, "lo": v * 0.9, "hi": v * 1.1, "n": n}  # noqa: E731
    metrics = {
        "embedding_latency_p50": metric(140.0),
        "embedding_latency_p90": metric(260.0),
        "availability": metric(0.998),
        "error_rate": metric(0.002),
        "billed_ratio": metric(1.0, 5),
    }
    Aggregate.objects.update_or_create(
        offering_id=offering.pk,
        region="all",
        window="24h",
        defaults={"computed_at": timezone.now(), "n": 60, "metrics": metrics, "flags": []},
    )
    ProbeResult.objects.create(
        offering_id=offering.pk,
        region="beijing",
        kind=ProbeKind.PERFORMANCE,
        variant="embed",
        started_at=timezone.now() - dt.timedelta(minutes=5),
        total_ms=140.0,
        input_tokens=1000,
        output_tokens=0,
        details={"inputs": 8, "dimensions": 1536},
    )
    return offering


def populate(personas, catalog) -> list[SitePage]:
    """Statistics for every offering (one thin), per-region rows, history with an incident, a served and
    a rejected request."""
    deepseek, silicon, anthropic = catalog
    history([deepseek, silicon])
    measure(deepseek, ttft=420, tps=62, n=120, hit=0.8)
    measure(silicon, ttft=910, tps=35, n=80, flags=["price_mismatch"])
    measure(anthropic, ttft=650, tps=48, n=4, flags=["billing_block_breaks_cache"])  # below every minimum
    for region, ttft in (("beijing", 380), ("shanghai", 450)):
        measure(deepseek, ttft=ttft, tps=60, n=40, region=region)
    embedding = embedding_offering()
    key = issue_key(personas.tenant, name="ci-bot")[0]
    now = time.time()
    rejected = replace(
        make_event(
            personas.tenant.pk,
            key.pk,
            request_id=REQUEST_REJECTED,
            status="rejected",
            http_status=429,
            error_code="key_rate_limited",
            tokens=Tokens(),
            offering_id=None,
            provider=None,
            cost_micros=0,
            charge_micros=0,
            finished_at=now - 5,
        ),
        prices=None,
    )
    served = make_event(personas.tenant.pk, key.pk, request_id=REQUEST_OK, finished_at=now - 10, markup_bps=2500)
    usage_ingest(events=[served, rejected])
    t = "/console/acme/"
    return [
        SitePage("leaderboard", "/", "anonymous"),
        SitePage("leaderboard-filtered", "/leaderboard/?region=mars&sort=tps&dir=desc", "anonymous"),
        SitePage("definitions", "/leaderboard/definitions/", "anonymous"),
        SitePage("model", "/models/deepseek-v4-flash/", "anonymous"),
        SitePage("provider", "/providers/deepseek/", "anonymous"),
        SitePage("offering", f"/offerings/{deepseek.pk}/", "anonymous"),
        SitePage("leaderboard-embeddings", "/?kind=embeddings", "anonymous"),
        SitePage("offering-embeddings", f"/offerings/{embedding.pk}/", "anonymous"),
        SitePage("login", "/accounts/login/", "anonymous"),
        SitePage("signup", "/accounts/signup/", "anonymous"),
        SitePage("password-reset", "/accounts/password/reset/", "anonymous"),
        SitePage("password-reset-sent", "/accounts/password/reset/sent/", "anonymous"),
        SitePage("not-found", "/no-such-page/", "anonymous", 404),
        SitePage("overview", t, "owner"),
        SitePage("keys", t + "keys/", "owner"),
        SitePage("team", t + "team/", "owner"),
        SitePage("credentials", t + "credentials/", "owner"),
        SitePage("routing", t + "routing/", "owner"),
        SitePage("usage", t + "usage/", "owner"),
        SitePage("requests", t + "requests/", "owner"),
        SitePage("request-rejected", t + f"requests/{REQUEST_REJECTED}/", "owner"),
        SitePage("request-ok", t + f"requests/{REQUEST_OK}/", "owner"),
        SitePage("playground", t + "playground/", "owner"),
        SitePage("billing", t + "billing/", "owner"),
        SitePage("password-change", "/accounts/password/change/", "owner"),
        SitePage("tenant-new", "/console/new/", "owner"),
        SitePage("ops-billing", "/ops/billing/", "staff"),
        SitePage("ops-tenant", f"/ops/billing/tenants/{personas.tenant.pk}/", "staff"),
        SitePage("ops-account", "/ops/billing/accounts/available/", "staff"),
        SitePage("ops-request", f"/ops/requests/{REQUEST_OK}/", "staff"),
    ]
