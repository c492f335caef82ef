"""The leaderboard table's columns per view (chat models, embedding models): key, header, numeric,
sortable. Every key has an entry on the definitions page (frontend/leaderboard/definitions.html)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy

from frontend.data.leaderboard import CHAT, EMBEDDINGS

# The chat models' view, in order.
COLUMNS = (
    ("model", gettext_lazy("Model"), False, True),
    ("provider", gettext_lazy("Provider"), False, True),
    ("region", gettext_lazy("Region"), False, True),
    ("quality", gettext_lazy("Quality"), True, True),
    ("ttft_p50", gettext_lazy("TTFT p50"), True, True),
    ("ttft_p90", gettext_lazy("TTFT p90"), True, True),
    ("ttft_p99", gettext_lazy("TTFT p99"), True, True),
    ("ttft_dist", gettext_lazy("TTFT distribution"), True, False),
    ("tps", gettext_lazy("Output tok/s"), True, True),
    ("tps_dist", gettext_lazy("Speed p50 · p90 · p99"), True, False),
    ("availability", gettext_lazy("Availability"), True, True),
    ("error_rate", gettext_lazy("Error rate"), True, True),
    ("cache_hit", gettext_lazy("Cache hits"), True, True),
    ("context_window", gettext_lazy("Context"), True, True),
    ("max_output", gettext_lazy("Max output"), True, True),
    ("parameters", gettext_lazy("Parameters"), False, False),
    ("price_input", gettext_lazy("Input $/1M"), True, True),
    ("price_output", gettext_lazy("Output $/1M"), True, True),
    ("price_cache_read", gettext_lazy("Cache read · write $/1M"), True, True),
    ("price_effective", gettext_lazy("Effective $/1M"), True, True),
    ("tokens_24h", gettext_lazy("Tokens served 24 h · 7 d"), True, True),
    ("n", gettext_lazy("Probes (n)"), True, True),
)
# The embedding models' view: no streaming, so the time to the whole answer instead of TTFT and speed; input
# tokens only, so one price; the vectors' measured length.
EMBEDDING_COLUMNS = (
    ("model", gettext_lazy("Model"), False, True),
    ("provider", gettext_lazy("Provider"), False, True),
    ("region", gettext_lazy("Region"), False, True),
    ("latency_p50", gettext_lazy("Latency p50"), True, True),
    ("latency_p90", gettext_lazy("Latency p90"), True, True),
    ("availability", gettext_lazy("Availability"), True, True),
    ("error_rate", gettext_lazy("Error rate"), True, True),
    ("price_input", gettext_lazy("Input $/1M"), True, True),
    ("dimensions", gettext_lazy("Dimensions"), True, True),
    ("context_window", gettext_lazy("Max input"), True, True),
    ("parameters", gettext_lazy("Parameters"), False, False),
    ("tokens_24h", gettext_lazy("Tokens served 24 h · 7 d"), True, True),
    ("n", gettext_lazy("Probes (n)"), True, True),
)
COLUMNS_OF = {CHAT: COLUMNS, EMBEDDINGS: EMBEDDING_COLUMNS}
SORTABLE = (
    *(key for columns in COLUMNS_OF.values() for key, _label, _numeric, sortable in columns if sortable),
    "tokens_7d",
    "price_cache_write",
)
FIRST_TREND = {CHAT: "ttft", EMBEDDINGS: "latency"}  # the trend a view opens with
