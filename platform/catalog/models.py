"""Provider, Model, Offering (model x provider) and versioned offering prices."""

from __future__ import annotations

from django.db import models


class Dialect(models.TextChoices):
    OPENAI = "openai", "OpenAI Chat Completions"
    ANTHROPIC = "anthropic", "Anthropic Messages"


class OfferingStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    DEGRADED = "degraded", "Degraded"
    DISABLED = "disabled", "Disabled"


class Provider(models.Model):
    slug = models.SlugField(max_length=63, unique=True)
    name = models.CharField(max_length=200)
    website = models.URLField(blank=True)
    base_url = models.CharField(max_length=500)
    dialect = models.CharField(max_length=16, choices=Dialect.choices)
    usage_dialect = models.CharField(max_length=16, default="openai")
    cached_tokens_in_input = models.BooleanField(default=True)
    cache_policy = models.CharField(max_length=16, default="normalized")
    cache_ttl_s = models.PositiveIntegerField(default=300)
    keeps_billing_block = models.BooleanField(default=False)
    api_key_env = models.CharField(max_length=100, blank=True)
    region = models.CharField(max_length=32, blank=True)

    def __str__(self) -> str:
        return self.slug


class Model(models.Model):
    slug = models.CharField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    author = models.CharField(max_length=100, blank=True)
    context_window = models.PositiveIntegerField()
    max_output = models.PositiveIntegerField()
    # Reasoning tokens the model may spend beyond the caller's max_tokens (docs/catalog-format.md).
    max_reasoning_tokens = models.PositiveIntegerField(default=0)
    quality = models.FloatField(default=0.5)
    aliases = models.JSONField(default=list, blank=True)  # other names callers send (contracts.model_names)

    def __str__(self) -> str:
        return self.slug


class Offering(models.Model):
    model = models.ForeignKey(Model, on_delete=models.PROTECT, related_name="offerings")
    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="offerings")
    upstream_model = models.CharField(max_length=200)
    base_url = models.CharField(max_length=500, blank=True)  # blank = provider's
    dialect = models.CharField(max_length=16, choices=Dialect.choices, blank=True)  # blank = provider's
    usage_dialect = models.CharField(max_length=16, blank=True)
    cached_tokens_in_input = models.BooleanField(null=True, blank=True)
    cache_policy = models.CharField(max_length=16, blank=True)
    cache_ttl_s = models.PositiveIntegerField(null=True, blank=True)
    keeps_billing_block = models.BooleanField(null=True, blank=True)
    context_window = models.PositiveIntegerField()
    max_output = models.PositiveIntegerField()
    max_reasoning_tokens = models.PositiveIntegerField(default=0)  # the model's unless the file overrides it
    parameters = models.JSONField(default=list)
    rpm = models.PositiveIntegerField(null=True, blank=True)
    tpm = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=OfferingStatus.choices, default=OfferingStatus.ACTIVE)
    # When evaluation last ran each integrity probe (price truth with the token count, quality canary).
    # Before both have run since the current price took effect the offering is not routable
    # (publishing.catalog_snapshot, docs/routing.md "Integrity before traffic").
    price_probed_at = models.DateTimeField(null=True, blank=True)
    quality_probed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "provider"], name="uniq_offering")]

    def __str__(self) -> str:
        return f"{self.model_id}@{self.provider_id}"


class OfferingPrice(models.Model):
    """One price version of an offering. Never updated: a change adds a new row."""

    offering = models.ForeignKey(Offering, on_delete=models.PROTECT, related_name="prices")
    version = models.PositiveIntegerField()
    # Micro-USD per 1M tokens.
    input = models.BigIntegerField()
    output = models.BigIntegerField()
    cache_read = models.BigIntegerField(default=0)
    cache_write_5m = models.BigIntegerField(default=0)
    cache_write_1h = models.BigIntegerField(default=0)
    reasoning = models.BigIntegerField(null=True, blank=True)
    effective_from = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["offering", "version"], name="uniq_offering_price_version")]
        ordering = ["offering_id", "-version"]

    def __str__(self) -> str:
        return f"{self.offering_id} v{self.version}"
