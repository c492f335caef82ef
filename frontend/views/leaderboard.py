"""Public leaderboard pages: no login. Data from frontend.data.leaderboard (evaluation's selectors)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from frontend.data.leaderboard import ALL_REGIONS, WINDOWS, Row, leaderboard, matches, trend

SORTABLE = (
    "model", "provider", "region", "ttft_p50", "ttft_p90", "tps", "availability",
    "error_rate", "cache_hit", "price_effective", "n",
)  # fmt: skip


def _params(request: HttpRequest) -> dict[str, str]:
    get = request.GET
    window = get.get("window", "24h")
    return {
        "q": get.get("q", "").strip()[:100],
        "model": get.get("model", ""),
        "provider": get.get("provider", ""),
        "region": get.get("region", ""),
        "window": window if window in WINDOWS else "24h",
        "sort": get.get("sort", "") if get.get("sort", "") in SORTABLE else "",
        "dir": "desc" if get.get("dir") == "desc" else "asc",
    }


def _sorted(rows: list[Row], sort: str, direction: str) -> list[Row]:
    if not sort:
        return rows
    present = [r for r in rows if getattr(r, sort) is not None]
    missing = [r for r in rows if getattr(r, sort) is None]
    present.sort(key=lambda r: getattr(r, sort), reverse=direction == "desc")
    return present + missing  # rows without data sort last either way


def _context(request: HttpRequest, **fixed: str) -> dict[str, Any]:
    params = {**_params(request), **fixed}
    all_rows = leaderboard(window=params["window"], region=params["region"] or ALL_REGIONS)
    rows = [row for row in all_rows if matches(row, q=params["q"], model=params["model"], provider=params["provider"])]
    return {
        "section": "leaderboard",
        "params": params,
        "rows": _sorted(rows, params["sort"], params["dir"]),
        "total": len(all_rows),
        "models": sorted({(r.model, r.model_name) for r in all_rows}),
        "providers": sorted({(r.provider, r.provider_name) for r in all_rows}),
        "regions": list(settings.TOKENWAY_REGIONS),
        "windows": WINDOWS,
        "rows_json": [row.as_json() for row in rows],
        "trend_24h": trend(rows=rows, window="24h", region=params["region"] or ALL_REGIONS),
        "trend_7d": trend(rows=rows, window="7d", region=params["region"] or ALL_REGIONS),
    }


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/leaderboard/index.html", _context(request))


@require_GET
def rows_fragment(request: HttpRequest) -> HttpResponse:
    """The table body alone, fetched by the page when the live group says aggregates refreshed."""
    return render(request, "frontend/leaderboard/_rows.html", _context(request))


@require_GET
def rows_json(request: HttpRequest) -> JsonResponse:
    context = _context(request)
    return JsonResponse(
        {"rows": context["rows_json"], "trend_24h": context["trend_24h"], "trend_7d": context["trend_7d"]}
    )


@require_GET
def model_detail(request: HttpRequest, slug: str) -> HttpResponse:
    context = _context(request, model=slug)
    if not any(r.model == slug for r in leaderboard(window=context["params"]["window"])):
        raise Http404("unknown model")
    context["title_model"] = next((name for s, name in context["models"] if s == slug), slug)
    return render(request, "frontend/leaderboard/model.html", context)


@require_GET
def provider_detail(request: HttpRequest, slug: str) -> HttpResponse:
    context = _context(request, provider=slug)
    if not any(r.provider == slug for r in leaderboard(window=context["params"]["window"])):
        raise Http404("unknown provider")
    context["title_provider"] = next((name for s, name in context["providers"] if s == slug), slug)
    return render(request, "frontend/leaderboard/provider.html", context)
