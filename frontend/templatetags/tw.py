"""Display filters: money in micro-units, percentages, milliseconds. Formatting only, no logic."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from contracts.usage import MICROS_PER_UNIT
from tenants.selectors import RouteMode

register = template.Library()
DASH = "—"


def _number(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@register.filter
def money(micros: Any) -> str:
    """Integer micro-units -> "$1.2345": 4 decimals below $1,000 (a request costs fractions of a cent)."""
    if _number(micros) is None:
        return DASH
    amount = Decimal(int(micros)) / MICROS_PER_UNIT
    places = "0.01" if abs(amount) >= 1000 else "0.0001"
    return f"${amount.quantize(Decimal(places)):,}"


@register.filter
def money_exact(micros: Any) -> str:
    """Integer micro-units -> "$19.999974": every micro-unit shows, so one cheap request moves a balance."""
    if _number(micros) is None:
        return DASH
    return f"${(Decimal(int(micros)) / MICROS_PER_UNIT).quantize(Decimal('0.000001')):,}"


@register.filter
def pct(ratio: Any, places: int = 1) -> str:
    number = _number(ratio)
    return DASH if number is None else f"{number * 100:.{int(places)}f}%"


@register.filter
def ms(value: Any) -> str:
    number = _number(value)
    return DASH if number is None else f"{number:,.0f} ms"


@register.filter
def num(value: Any, places: int = 0) -> str:
    number = _number(value)
    return DASH if number is None else f"{number:,.{int(places)}f}"


@register.filter
def sortkey(value: Any) -> str:
    """Value for the table's data-sort attribute: numbers as numbers, missing sorts last."""
    number = _number(value)
    if number is not None:
        return repr(number)
    return "" if value is None else str(value).lower()


FIGURE_FORMAT: dict[str, Callable[[Any], str]] = {
    "ttft_p50": lambda v: ms(v),
    "ttft_p90": lambda v: ms(v),
    "tps": lambda v: num(v, 1),
    "availability": lambda v: pct(v, 2),
    "error_rate": lambda v: pct(v, 2),
    "cache_hit": lambda v: pct(v),
    "ttft_p99": lambda v: ms(v),
    "quality": lambda v: pct(v),
    "latency_p50": lambda v: ms(v),
    "latency_p90": lambda v: ms(v),
}


CI_FORMAT: dict[str, Callable[[Any], str]] = {
    "ttft_p50": lambda v: num(v),
    "ttft_p90": lambda v: num(v),
    "availability": lambda v: pct(v, 1),
    "error_rate": lambda v: pct(v, 1),
    "ttft_p99": lambda v: num(v),
    "quality": lambda v: pct(v),
    "latency_p50": lambda v: num(v),
    "latency_p90": lambda v: num(v),
}


@register.simple_tag
def figure_cell(row: Any, column: str, label: str = "") -> SafeString:
    """A leaderboard cell: value, its 95% interval underneath, n and interval in the title; "needs more
    data" below the minimum sample count; "—" when not measured."""
    fig = row.figures.get(column) if row.figures else None
    fmt = FIGURE_FORMAT[column]
    if fig is None or (fig.value is None and not fig.thin):
        return format_html('<td class="num" data-label="{}" data-sort="">{}</td>', label, DASH)
    if fig.thin:
        return format_html(
            '<td class="num" data-label="{}" data-sort=""><span class="thin" title="{}">{}</span></td>',
            label,
            _("n = %(n)s: fewer samples than this figure needs") % {"n": fig.n},
            _("needs more data"),
        )
    short = CI_FORMAT.get(column, fmt)
    interval = f"{short(fig.lo)}–{short(fig.hi)}" if fig.lo is not None and fig.hi is not None else ""
    title = _("95%% interval %(interval)s · n = %(n)s") % {"interval": interval or DASH, "n": fig.n}
    return format_html(
        '<td class="num" data-label="{}" data-sort="{}" title="{}"><span class="v">{}</span>{}</td>',
        label,
        sortkey(fig.value),
        title,
        fmt(fig.value),
        format_html('<span class="ci">{} · n {}</span>', interval, fig.n)
        if interval
        else format_html('<span class="ci">n {}</span>', fig.n),
    )


USAGE_STATUS_LABELS = {
    "ok": gettext_lazy("completed"),
    "upstream_error": gettext_lazy("provider error"),
    "client_cancelled": gettext_lazy("cancelled by the client"),
    "failed": gettext_lazy("failed"),
    "rejected": gettext_lazy("rejected"),
}


@register.filter
def usage_status(status: Any) -> str:
    """A request's status (contracts.usage.UsageStatus) in the page's language."""
    return str(USAGE_STATUS_LABELS.get(str(status), status))


# The regions probes run from (settings.TOKENWAY_REGIONS); a region not listed shows its slug, capitalised.
REGION_NAMES = {
    "beijing": gettext_lazy("Beijing"),
    "shanghai": gettext_lazy("Shanghai"),
    "shenzhen": gettext_lazy("Shenzhen"),
    "chengdu": gettext_lazy("Chengdu"),
    "hangzhou": gettext_lazy("Hangzhou"),
    "all": gettext_lazy("all regions"),
}


@register.filter
def region_name(region: Any) -> str:
    """A region's name in the page's language ("beijing" -> "Beijing" / "北京"); empty stays empty."""
    if not region:
        return ""
    return str(REGION_NAMES.get(str(region), str(region).capitalize()))


@register.filter
def route_mode_name(mode: Any) -> str:
    """A route mode (tenants.models.RouteMode) in the page's language; an unknown one as it is."""
    if not mode:
        return ""
    return str(dict(RouteMode.choices).get(str(mode), mode))
