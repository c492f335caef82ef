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
    }


@register.simple_tag
def js_texts() -> SafeString:
    return json_script(texts(), "tw-texts")
