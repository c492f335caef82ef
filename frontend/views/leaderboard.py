"""Public leaderboard pages: no login. Data from frontend.data.leaderboard (evaluation's selectors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from evaluation.selectors import incidents_list
from frontend.data import board_cache
from frontend.data.leaderboard import (
    ALL_REGIONS,
    CHAT,
    EMBEDDINGS,
    KINDS,
    MIN_N,
    TREND_METRICS,
    WINDOWS,
    Row,
    by_region,
    enrich,
    leaderboard,
    matches,
    offering_kind_of,
    stats_read,
    trend,
)
from frontend.views.board_columns import COLUMNS_OF, FIRST_TREND, SORTABLE

TREND_WINDOWS = (
    ("15m", gettext_lazy("15 minutes")),
    ("1h", gettext_lazy("1 hour")),
    ("24h", gettext_lazy("24 hours")),
    ("7d", gettext_lazy("7 days")),
)


def _params(request: HttpRequest, all_rows: list[Row], fixed: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The page's filters from the query string, and one message per value that was not understood
    (the value is then ignored: the page says so instead of silently showing something else)."""
    get = request.GET
    notices: list[str] = []
    models = {r.model for r in all_rows}
    providers = {r.provider for r in all_rows}
    choices: dict[str, tuple[set[str], str]] = {
        "model": (models, _("No model “%(value)s” in the catalog: showing every model.")),
        "provider": (providers, _("No provider “%(value)s” in the catalog: showing every provider.")),
        "region": (
            {*settings.TOKENWAY_REGIONS, ALL_REGIONS},
            _("Unknown region “%(value)s”: showing all regions combined."),
        ),
        "window": (set(WINDOWS), _("Unknown window “%(value)s”: showing the last 24 hours.")),
        "sort": (set(SORTABLE), _("Cannot sort by “%(value)s”: showing the default order.")),
        "dir": ({"asc", "desc"}, _("Unknown sort direction “%(value)s”: sorting ascending.")),
        "param": (
            {p for r in all_rows for p in r.parameters},
            _("No offering declares the parameter “%(value)s”: showing every offering."),
        ),
        "kind": (set(KINDS), _("Unknown view “%(value)s”: showing chat models.")),
    }
    params = {
        "q": get.get("q", "").strip()[:100],
        "model": "",
        "provider": "",
        "region": "",
        "window": "24h",
        "sort": "",
        "dir": "asc",
        "param": "",
        "kind": "",
    }
    for name, (allowed, message) in choices.items():
        value = get.get(name, "")
        if not value:
            continue
        if value in allowed:
            params[name] = value
        else:
            notices.append(message % {"value": value[:60]})
    if params["region"] == ALL_REGIONS:
        params["region"] = ""
    return {**params, **fixed}, notices


def _sorted(rows: list[Row], sort: str, direction: str) -> list[Row]:
    if not sort:
        return rows
    present = [r for r in rows if getattr(r, sort) is not None]
    missing = [r for r in rows if getattr(r, sort) is None]
    present.sort(key=lambda r: getattr(r, sort), reverse=direction == "desc")
    return present + missing  # rows without data sort last either way


def _kind(params: dict[str, str], rows: list[Row]) -> str:
    """The view: the one asked for; else embeddings when every offering the model or provider filter
    leaves is an embedding offering (an embedding model's page); else chat."""
    if params["kind"]:
        return params["kind"]
    subject = [r for r in rows if matches(r, model=params["model"], provider=params["provider"])]
    narrowed = bool(params["model"] or params["provider"])
    return EMBEDDINGS if narrowed and subject and all(r.kind == EMBEDDINGS for r in subject) else CHAT


def _columns(params: dict[str, str], fixed: dict[str, str], base: str, kind: str) -> list[dict[str, Any]]:
    """Headers: a link that sorts (the sort lives in the URL, so a view can be shared) and a definition link."""
    kept = {
        k: v for k, v in params.items() if v and k not in ("sort", "dir", *fixed) and not (k == "window" and v == "24h")
    }
    columns = []
    for key, label, numeric, sortable in COLUMNS_OF[kind]:
        current = params["sort"] == key
        direction = "desc" if current and params["dir"] == "asc" else "asc"
        columns.append(
            {
                "key": key,
                "label": label,
                "numeric": numeric,
                "href": base + "?" + urlencode({**kept, "sort": key, "dir": direction}) if sortable else "",
                "aria_sort": ("descending" if params["dir"] == "desc" else "ascending") if current else "",
            }
        )
    return columns


def _context(request: HttpRequest, *, base: str | None = None, **fixed: str) -> dict[str, Any]:
    window = request.GET.get("window", "24h")
    window = window if window in WINDOWS else "24h"
    reads = {(window, ALL_REGIONS): stats_read(window, ALL_REGIONS)}  # read once, shared with the region table
    all_rows = leaderboard(window=window, region=ALL_REGIONS, stats=reads[(window, ALL_REGIONS)])
    params, notices = _params(request, all_rows, fixed)
    kind = _kind(params, all_rows)
    region = params["region"] or ALL_REGIONS
    if region != ALL_REGIONS or window != params["window"]:
        reads[(params["window"], region)] = stats_read(params["window"], region)
        all_rows = leaderboard(window=params["window"], region=region, stats=reads[(params["window"], region)])
    all_rows = enrich([r for r in all_rows if r.kind == kind], window=params["window"], region=region)
    rows = [
        row
        for row in all_rows
        if matches(row, q=params["q"], model=params["model"], provider=params["provider"])
        and (not params["param"] or params["param"] in row.parameters)
    ]
    rows = _sorted(rows, params["sort"], params["dir"])
    return {
        "section": "leaderboard",
        "params": params,
        "notices": notices,
        "kind": kind,
        "kind_links": _kind_links(params, fixed, base or request.path, kind),
        "rows_template": f"frontend/leaderboard/_rows{'_embeddings' if kind == EMBEDDINGS else ''}.html",
        "columns": _columns(params, fixed, base or request.path, kind),
        "rows": rows,
        "total": len(all_rows),
        "min_n": MIN_N,
        "models": sorted({(r.model, r.model_name) for r in all_rows}),
        "providers": sorted({(r.provider, r.provider_name) for r in all_rows}),
        "all_providers": sorted({r.provider for r in all_rows}),
        "all_parameters": sorted({p for r in all_rows for p in r.parameters}),
        "column_count": len(COLUMNS_OF[kind]),
        "regions": list(settings.TOKENWAY_REGIONS),
        "windows": WINDOWS,
        "trend_windows": TREND_WINDOWS,
        "rows_json": [row.as_json() for row in rows],
        "stats_reads": reads,
    }


def _kind_links(params: dict[str, str], fixed: dict[str, str], base: str, kind: str) -> list[dict[str, Any]]:
    """The two views of the board (chat models, embedding models) as links keeping the window and region;
    none on a page whose model or offering fixes the view."""
    if "model" in fixed or "kind" in fixed:
        return []
    kept = {k: params[k] for k in ("region", "window") if params[k] and not (k == "window" and params[k] == "24h")}
    labels = {CHAT: _("Chat models"), EMBEDDINGS: _("Embedding models")}
    links = []
    for view in KINDS:
        query = urlencode({**kept, "kind": view} if view != CHAT else kept)
        links.append({"label": labels[view], "href": f"{base}?{query}" if query else base, "current": view == kind})
    return links


def _with_trend(context: dict[str, Any]) -> dict[str, Any]:
    """The page's first trend (TTFT, or latency for embedding models, over the page's window); tabs load
    the others from trend.json."""
    region = context["params"]["region"] or ALL_REGIONS
    context["trend"] = trend(
        rows=context["rows"],
        window=_trend_window(context["params"]["window"]),
        region=region,
        metric=FIRST_TREND[context["kind"]],
    )
    return context


def _trend_window(window: str) -> str:
    return window if window in WINDOWS else "24h"


def board_body(
    request: HttpRequest,
    build: Callable[[], tuple[str, str, dict[str, Any]]],
    *,
    path: str | None = None,
    stale_ok: bool = True,
) -> tuple[dict[str, Any], str]:
    """The page's body (and title) from the cache (per stats and catalog version, language and query), else
    built, rendered and stored; with where it came from: ``hit``, ``stale`` (the previous version, while a
    worker renders this one) or ``miss`` (rendered here)."""
    key = board_cache.page_key(request, path=path)
    page = board_cache.get(key) if key else None
    if page is not None:
        return page, "hit"
    page = board_cache.stale(key) if key and stale_ok else None
    if page is not None:
        return page, "stale"
    title, template, context = build()
    page = {"title": str(title), "body": render_to_string(template, context)}
    if key:
        board_cache.put(key, page)
    return page, "miss"


def _cached_page(
    request: HttpRequest, build: Callable[[], tuple[str, str, dict[str, Any]]], *, path: str | None = None
) -> HttpResponse:
    """The cached body in a frame rendered per request (navigation, language form, CSRF)."""
    page, source = board_body(request, build, path=path)
    board_cache.mark_visited()
    response = render(request, "frontend/leaderboard/page.html", {"section": "leaderboard", **page})
    response["X-Board-Cache"] = source
    return response


def index_build(request: HttpRequest) -> tuple[str, str, dict[str, Any]]:
    context = _with_trend(_context(request, base=reverse("frontend:home")))
    _regions_context(context)
    return _("Leaderboard"), "frontend/leaderboard/index.html", context


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    """``/`` and ``/leaderboard/`` are one page and one cache entry."""
    return _cached_page(request, lambda: index_build(request), path=reverse("frontend:home"))


@require_GET
def rows_fragment(request: HttpRequest) -> HttpResponse:
    """The table body alone, fetched by the page when the live group says aggregates refreshed."""
    context = _context(request)
    return render(request, context["rows_template"], context)


@require_GET
def rows_json(request: HttpRequest) -> JsonResponse:
    context = _context(request)
    return JsonResponse({"rows": context["rows_json"], "notices": context["notices"]})


@require_GET
def trend_json(request: HttpRequest) -> JsonResponse:
    """One trend (metric × window) for the rows the filters select; unknown values are a 400."""
    metric, window = request.GET.get("metric", "ttft"), request.GET.get("trend_window", "24h")
    if metric not in TREND_METRICS or window not in WINDOWS:
        return JsonResponse(
            {"error": {"code": "invalid_choice", "message": _("Unknown trend metric or window.")}}, status=400
        )
    context = _context(request)
    offering = request.GET.get("offering", "")
    rows = [r for r in context["rows"] if not offering or str(r.offering_id) == offering]
    region = context["params"]["region"] or ALL_REGIONS
    return JsonResponse(trend(rows=rows, window=window, region=region, metric=metric))


@require_GET
def definitions(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/leaderboard/definitions.html", {"section": "leaderboard", "min_n": MIN_N})


def _regions_context(context: dict[str, Any]) -> None:
    ids = {r.offering_id for r in context["rows"]}
    window = context["params"]["window"]
    context["region_rows"] = by_region(
        window=window,
        regions=context["regions"],
        offering_ids=ids,
        stats=context["stats_reads"].get((window, ALL_REGIONS)),
    )
    cells = [r for item in context["region_rows"] for _region, r in item["regions"] if r]
    # the bars' common scale: the slowest region's TTFT (chat) or time to the whole answer (embeddings)
    context["region_max_ttft"] = max((r.ttft_p50 for r in cells if r.ttft_p50), default=0)
    context["region_max_latency"] = max((r.latency_p50 for r in cells if r.latency_p50), default=0)


@require_GET
def model_detail(request: HttpRequest, slug: str) -> HttpResponse:
    def build() -> tuple[str, str, dict[str, Any]]:
        context = _context(request, model=slug)
        if not any(s == slug for s, _name in context["models"]):
            raise Http404("unknown model")
        context["title_model"] = next((name for s, name in context["models"] if s == slug), slug)
        _regions_context(context)
        return context["title_model"], "frontend/leaderboard/model.html", _with_trend(context)

    return _cached_page(request, build)


@require_GET
def provider_detail(request: HttpRequest, slug: str) -> HttpResponse:
    def build() -> tuple[str, str, dict[str, Any]]:
        context = _context(request, provider=slug)
        if not any(s == slug for s, _name in context["providers"]):
            raise Http404("unknown provider")
        context["title_provider"] = next((name for s, name in context["providers"] if s == slug), slug)
        _regions_context(context)
        return context["title_provider"], "frontend/leaderboard/provider.html", _with_trend(context)

    return _cached_page(request, build)


@require_GET
def offering_detail(request: HttpRequest, offering_id: int) -> HttpResponse:
    def build() -> tuple[str, str, dict[str, Any]]:
        context = _context(request, kind=offering_kind_of(offering_id) or CHAT)
        row = next((r for r in context["rows"] if r.offering_id == offering_id), None)
        if row is None:
            listed = leaderboard(window=context["params"]["window"])
            row = next(
                (r for r in enrich(listed, window=context["params"]["window"]) if r.offering_id == offering_id), None
            )
        if row is None:
            raise Http404("unknown offering")
        region = context["params"]["region"] or ALL_REGIONS
        context["rows"] = [row]
        context["rows_json"] = [row.as_json()]
        context["offering"] = row
        context["trend"] = trend(rows=[row], window=_trend_window(context["params"]["window"]), region=region)
        context["incidents"] = incidents_list(state="all", offering_ids=[offering_id], region=region)
        _regions_context(context)
        return f"{row.model_name} · {row.provider_name}", "frontend/leaderboard/offering.html", context

    return _cached_page(request, build)
