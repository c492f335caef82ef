"""Raw probe results (a time series), aggregates, incidents and per-offering probe policies."""

from __future__ import annotations

from django.contrib.postgres.indexes import BrinIndex
from django.db import models


class ProbeKind(models.TextChoices):
    PERFORMANCE = "performance", "Performance (streaming, 1k and 10k input)"
    CACHE = "cache", "Prompt cache (multi-turn, plain / billing block / stripped)"
    PRICE = "price", "Price truth (reported vs counted tokens and cost)"
    CAPABILITY = "capability", "Capability (context, max output, tools, JSON mode)"
    QUALITY = "quality", "Quality canary (checkable tasks)"


class ErrorClass(models.TextChoices):
    TIMEOUT = "timeout", "Timeout"
    CONNECT = "connect", "Connection failed"
    RATE_LIMITED = "rate_limited", "HTTP 429"
    SERVER_ERROR = "server_error", "HTTP 5xx"
    CLIENT_ERROR = "client_error", "HTTP 4xx (not 429)"
    BAD_RESPONSE = "bad_response", "Invalid JSON or unexpected shape"
    TRUNCATED = "truncated", "Stream ended before completion"
    BAD_USAGE = "bad_usage", "Usage missing or inconsistent"
    WRONG_ANSWER = "wrong_answer", "Canary answer wrong"
    UNSUPPORTED = "unsupported", "Declared capability refused"


class ProbeResult(models.Model):
    """One measured request. Append-only; deleted by the retention task after RAW_RETENTION_DAYS."""

    offering_id = models.BigIntegerField()  # catalog Offering id; no FK so retention never locks the catalog
    region = models.CharField(max_length=32)
    kind = models.CharField(max_length=16, choices=ProbeKind.choices)
    variant = models.CharField(max_length=32, blank=True)  # "1k", "10k", "plain", "billing", "stripped", task name
    started_at = models.DateTimeField()
    ttft_ms = models.FloatField(null=True)  # first token of any kind, reasoning included (probes/speed.py)
    tps = models.FloatField(null=True)  # output tokens/s while they were produced, reasoning included
    total_ms = models.FloatField(null=True)
    input_tokens = models.IntegerField(null=True)  # as reported, cache reads included
    output_tokens = models.IntegerField(null=True)
    cached_tokens = models.IntegerField(null=True)
    error_class = models.CharField(max_length=16, choices=ErrorClass.choices, blank=True)
    http_status = models.IntegerField(null=True)
    details = models.JSONField(default=dict)
    # First answer token, after any reasoning (equals ttft_ms for a model that does not reason). Rows
    # written before it existed have none.
    answer_ttft_ms = models.FloatField(null=True)

    class Meta:
        indexes = [
            BrinIndex(fields=["started_at"], name="probe_started_brin"),
            models.Index(fields=["offering_id", "kind", "started_at"], name="probe_off_kind_time"),
        ]


class Window(models.TextChoices):
    QUARTER = "15m", "15 minutes"
    HOUR = "1h", "1 hour"
    DAY = "24h", "24 hours"
    WEEK = "7d", "7 days"


ALL_REGIONS = "all"


class Aggregate(models.Model):
    """Latest statistics of one offering x region (or "all") x window; replaced on each refresh."""

    offering_id = models.BigIntegerField()
    region = models.CharField(max_length=32)
    window = models.CharField(max_length=4, choices=Window.choices)
    computed_at = models.DateTimeField()
    n = models.IntegerField()
    metrics = models.JSONField(default=dict)  # name -> {"value", "lo", "hi", "n"}
    flags = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["offering_id", "region", "window"], name="uniq_aggregate"),
        ]


class Resolution(models.TextChoices):
    MINUTE = "m", "minute"
    HOUR = "h", "hour"
    DAY = "d", "day"


class ProbeRollup(models.Model):
    """Additive counters and fixed-bucket histograms of one offering x region x probe kind x period.

    Maintained as probe results are written (``evaluation/services/rollup.py``: minute, hour and day
    rows in the same transaction as the raw rows), or rebuilt from raw rows in SQL; the counters are
    defined in ``evaluation/rules/definitions.py``.
    """

    offering_id = models.BigIntegerField()
    region = models.CharField(max_length=32)
    kind = models.CharField(max_length=16, choices=ProbeKind.choices)
    resolution = models.CharField(max_length=1, choices=Resolution.choices)
    bucket = models.DateTimeField()  # period start
    counts = models.JSONField(default=dict)  # counter name -> sum

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["resolution", "bucket", "offering_id", "region", "kind"], name="uniq_probe_rollup"
            ),
        ]
        indexes = [models.Index(fields=["offering_id", "resolution", "bucket"], name="rollup_offering_time")]


class WindowState(models.Model):
    """The end of a window's aggregates (every row of the window describes [start, end)) and when they were
    last recomputed in full; rows of offerings without new or departed samples are left as they were."""

    window = models.CharField(max_length=4, choices=Window.choices, unique=True)
    end = models.DateTimeField()
    refreshed_at = models.DateTimeField()
    full_at = models.DateTimeField()


class DirtyOffering(models.Model):
    """An offering with probe rows written since the window's last refresh (marked in the writing
    transaction, taken in the refreshing one, so none is missed or taken twice)."""

    window = models.CharField(max_length=4, choices=Window.choices)
    offering_id = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["window", "offering_id"], name="uniq_dirty_offering")]


class RollupBackfill(models.Model):
    """A range of raw rows rolled up in one go (on the first refresh after an upgrade, or by hand)."""

    since = models.DateTimeField()
    until = models.DateTimeField()
    done_at = models.DateTimeField()


class Incident(models.Model):
    """A change point in one metric of an offering x region; open until the metric returns to baseline."""

    offering_id = models.BigIntegerField()
    region = models.CharField(max_length=32)
    metric = models.CharField(max_length=32)  # "ttft", "tps", "availability"
    direction = models.CharField(max_length=8)  # "worse" | "better"
    opened_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    baseline = models.FloatField()
    observed = models.FloatField()
    details = models.JSONField(default=dict)

    class Meta:
        indexes = [models.Index(fields=["offering_id", "region", "metric", "closed_at"], name="incident_open")]
        constraints = [
            models.UniqueConstraint(
                fields=["offering_id", "region", "metric"],
                condition=models.Q(closed_at__isnull=True),
                name="uniq_open_incident",
            )
        ]


class ProbePolicy(models.Model):
    """Per-offering overrides of the probe schedule (defaults come from settings)."""

    offering_id = models.BigIntegerField(unique=True)
    enabled = models.BooleanField(default=True)
    performance_interval_s = models.PositiveIntegerField(null=True, blank=True)
    hourly_interval_s = models.PositiveIntegerField(null=True, blank=True)  # cache/price/capability/quality
    regions = models.JSONField(default=list, blank=True)  # empty = every region
