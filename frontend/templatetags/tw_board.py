"""Leaderboard cells beyond single figures: distributions as small inline SVG charts, token counts, sizes.

Server-rendered so the cached page carries them and they need no script to read.
"""

from __future__ import annotations

import math
from typing import Any

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from frontend.templatetags.tw import DASH, ms, num

register = template.Library()
CHART_W, CHART_H = 96, 22  # px: fits a table cell and a phone card
MARKS = (("p50", "#1c7ed6"), ("p90", "#e8590c"), ("p99", "#c92a2a"))


@register.filter
def compact(value: Any) -> str:
    """12345678 -> "12.3M": token counts and context sizes at a glance (the exact number is in the title)."""
    if value in (None, ""):
        return DASH
    number = float(value)
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(number) >= size:
            return f"{number / size:.3g}{suffix}"
    return f"{number:.0f}"


def _fmt(metric: str, value: float | None) -> str:
    return ms(value) if metric == "ttft" else num(value, 1)


def _x(value: float, lo: float, hi: float) -> float:
    if hi <= lo:
        return CHART_W / 2
    return (math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo)) * CHART_W


@register.simple_tag
def dist_chart(dist: dict[str, Any] | None, metric: str) -> SafeString:
    """A histogram of the window's probes on a log axis with p50 / p90 / p99 ticks; "—" without probes.
    The bars are one path and the numbers are formatted here (only the label is text): 104 of these per board."""
    bins = (dist or {}).get("bins") or []
    if not bins or not dist:
        return format_html("{}", DASH)
    lo, hi = bins[0][0], bins[-1][1]
    top = max(count for _lo, _hi, count in bins) or 1
    width = CHART_W / len(bins)
    bars = "".join(
        f"M{i * width:.1f} {CHART_H}v-{CHART_H * count / top:.1f}h{max(width - 1, 1):.1f}v{CHART_H * count / top:.1f}z"
        for i, (_lo, _hi, count) in enumerate(bins)
        if count
    )
    ticks = "".join(
        f'<path d="M{_x(dist[name]["value"], lo, hi):.1f} 0V{CHART_H}" stroke="{colour}" stroke-width="1.5"/>'
        for name, colour in MARKS
        if dist.get(name)
    )
    label = _(
        "Distribution of %(n)s probes, %(low)s to %(high)s (log scale): p50 %(p50)s, p90 %(p90)s, p99 %(p99)s"
    ) % {
        "n": dist.get("n", 0),
        "low": _fmt(metric, lo),
        "high": _fmt(metric, hi),
        **{name: _fmt(metric, (dist.get(name) or {}).get("value")) for name, _colour in MARKS},
    }
    return mark_safe(  # noqa: S308 - numbers formatted above and the escaped label only
        f'<svg class="dist" width="{CHART_W}" height="{CHART_H}" role="img" aria-label="{escape(label)}">'
        f'<path d="{bars}" fill="#868e96"/>{ticks}</svg>'
    )


@register.simple_tag
def dist_figures(dist: dict[str, Any] | None, metric: str) -> SafeString:
    """ "p50 · p90 · p99" with each figure's n; a quantile below its minimum n says so."""
    if not dist:
        return format_html("{}", DASH)
    parts = []
    for name, _colour in MARKS:
        figure = dist.get(name)
        parts.append(_fmt(metric, figure["value"]) if figure else _("needs more data"))
    interval = dist.get("p50") or {}
    title = _("p50 95%% interval %(lo)s–%(hi)s · n = %(n)s") % {
        "lo": _fmt(metric, interval.get("lo")),
        "hi": _fmt(metric, interval.get("hi")),
        "n": dist.get("n", 0),
    }
    return format_html(
        '<span class="v" title="{}">{}</span><span class="ci">n {}</span>', title, " · ".join(parts), dist.get("n", 0)
    )


def texts() -> dict[str, str]:
    """The leaderboard script's own strings (beside the shared ``{% js_texts %}``)."""
    return {
        "clipped_x": _("%(count)s offerings slower than %(limit)s ms are drawn at the right edge (▶): %(names)s."),
        "clipped_y": _("%(count)s values above %(limit)s are drawn at the top edge (▲): %(names)s."),
        "legend_trend": _("Lines on the trend chart"),
        "incident_band": _("incident"),
        "no_incidents": _("No incidents on these lines in this window."),
    }


@register.simple_tag
def board_texts() -> SafeString:
    from django.utils.html import json_script

    return json_script(texts(), "lb-texts")
