"""``{% js_texts %}``: the scripts' strings, translated on the server and embedded as JSON (``tw.t(key)``)."""

from __future__ import annotations

from django import template
from django.utils.html import json_script
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

register = template.Library()


def texts() -> dict[str, str]:
    return {
        "copied": _("Copied"),
        "usd": _("USD"),
        "charged_usd": _("Charged (USD)"),
        "provider_cost_usd": _("Provider cost (USD)"),
        "cache_savings_usd": _("Cache savings (USD)"),
        "margin_usd": _("Margin (USD)"),
        "requests_short": _("req"),
        "by_model": _("model"),
        "by_provider": _("provider"),
        "by_key": _("key"),
        "ttft_p50_ms": _("TTFT p50 (ms)"),
        "output_tps": _("output tok/s"),
        "tok_s": _("tok/s"),
        "tokens_in_out": _("%(input)s in / %(output)s out"),
        "stopped": _("[stopped]"),
        "error": _("Error: %(message)s"),
        "key_missing": _("Paste an API key or create a playground key first."),
        "no_match": _("No offering matches this search. Clear the search box or pick “All” to see every offering."),
        "scatter_summary": _(
            "%(count)s offerings plotted. Fastest first token: %(fastest)s (%(ttft)s ms). "
            "Fastest output: %(quickest)s (%(tps)s tok/s)."
        ),
        "trend_line": _("%(label)s: from %(first)s to %(last)s over %(points)s points."),
        "incident_line": _("Incident on %(label)s: %(metric)s in %(region)s, opened %(at)s."),
        "trend_ttft": _("TTFT p50 (ms)"),
        "trend_tps": _("output tok/s"),
        "trend_availability": _("availability"),
        "trend_price": _("effective input price (micro-USD per 1M)"),
        "trend_latency": _("latency p50 (ms)"),
        # xgettext:no-python-format
        "ci_low": _("95% interval (low)"),
        # xgettext:no-python-format
        "ci_band": _("95% interval"),
        "bad_temperature": _("Temperature must be a number from 0 to 2."),
        "bad_max_tokens": _("Max output tokens must be a whole number of at least 1."),
        "cost_pending": _("Tokens and cost: waiting for the billed record…"),
        "cost_later": _("Tokens and cost will appear in the request log."),
        "message_facts": _("%(input)s tokens in · %(output)s out · charged %(cost)s"),
        "metric_ttft": _("TTFT"),
        "metric_tps": _("Output tok/s"),
        "metric_availability": _("Availability"),
        "live_on": _("● live"),
        "live_off": _("reconnecting…"),
    }


@register.simple_tag
def js_texts() -> SafeString:
    return json_script(texts(), "tw-texts")
