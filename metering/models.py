"""Metering: usage records, the double-entry ledger, Stripe bookkeeping, alerts, findings.

Money is integer micro-units (USD) everywhere. The ledger is append-only: a
PostgreSQL trigger refuses UPDATE/DELETE of journals and lines, and a deferred
constraint trigger refuses a journal whose lines do not sum to zero at commit
(migration 0002).

Usage records and the ledger (journals and their lines) are partitioned by month in PostgreSQL (migration
0011, ``metering.partitions``). A primary key or UNIQUE constraint of a partitioned table must include the
partition column, so the database keys are (id, time) and (request id | journal key, time); exactly-once
across partitions is held by the small unpartitioned key tables ``UsageKey`` and ``JournalKey``. Django
still addresses rows by ``id`` alone (ids come from one sequence per table).
"""

from __future__ import annotations

from django.contrib.postgres.indexes import BrinIndex
from django.db import models

from tenants.models import Tenant


class UsageRecord(models.Model):
    """One API request's tokens and price, exactly once per request id."""

    request_id = models.CharField(max_length=64)  # once: UsageKey; here unique with the partition column
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="usage_records")
    key_id = models.BigIntegerField()  # ApiKey id; no FK so deleting a key never touches billing history
    model = models.CharField(max_length=100)
    offering_id = models.BigIntegerField(null=True)
    provider = models.CharField(max_length=63, blank=True)
    region = models.CharField(max_length=32, blank=True)
    route_mode = models.CharField(max_length=16, blank=True)
    route_reason = models.CharField(max_length=200, blank=True)
    # Tokens by kind.
    input_uncached = models.BigIntegerField(default=0)
    cache_read = models.BigIntegerField(default=0)
    cache_write_5m = models.BigIntegerField(default=0)
    cache_write_1h = models.BigIntegerField(default=0)
    output = models.BigIntegerField(default=0)
    reasoning = models.BigIntegerField(default=0)
    usage_source = models.CharField(max_length=16)  # provider | estimated
    price_version = models.PositiveIntegerField(null=True)
    prices = models.JSONField(null=True)  # the snapshot the gateway priced with
    # Provider cost as booked (0 for BYOK: the provider bills the tenant): the provider's own reported cost when
    # its usage carried one (e.g. OpenRouter's usage.cost), else ours; ours is always kept beside it.
    cost_micros = models.BigIntegerField()
    computed_cost_micros = models.BigIntegerField(default=0)  # ours: the price snapshot x the tokens
    reported_cost_micros = models.BigIntegerField(null=True)  # the provider's own; null when the wire gives none
    charge_micros = models.BigIntegerField()  # tenant price
    full_input_price_micros = models.BigIntegerField(default=0)  # cache reads at full input price (savings)
    status = models.CharField(max_length=32)  # contracts.usage.USAGE_STATUSES; "rejected" has no journal
    http_status = models.PositiveSmallIntegerField(default=0)
    error_code = models.CharField(max_length=64, blank=True, default="")  # what the caller saw, e.g. key_rate_limited
    end_state = models.CharField(max_length=32, blank=True, default="")  # contracts.usage.EndState: what was charged
    finish_reason = models.CharField(max_length=64, blank=True, default="")  # the provider's word: stop, length, ...
    upstream_id = models.CharField(max_length=128, blank=True, default="")  # the provider's response id
    stream = models.BooleanField(default=False)
    byok = models.BooleanField(default=False)
    dialect_in = models.CharField(max_length=16, blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    cache_fingerprint = models.CharField(max_length=128, blank=True)
    flags = models.JSONField(default=list)
    # contracts.route_explain.RouteCandidate as dicts: why this offering, why not the others (compact).
    route_candidates = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField()  # the partition column: the event's own time, the same on every retry
    ttft_ms = models.FloatField(null=True)
    total_ms = models.FloatField(default=0)
    created_at = models.DateTimeField()  # ingestion time (set by the batch insert)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["request_id", "finished_at"], name="usage_request_once")]
        indexes = [
            BrinIndex(fields=["created_at"], name="usage_created_brin"),
            models.Index(fields=["tenant", "finished_at"], name="usage_tenant_time"),
            models.Index(fields=["tenant", "key_id", "finished_at"], name="usage_tenant_key_time"),
            # Provider-truth drift reads only the rows whose provider reported its cost (metering.provider_truth).
            models.Index(
                fields=["created_at"],
                name="usage_reported_cost_time",
                condition=models.Q(reported_cost_micros__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.request_id


class UsageKey(models.Model):
    """A usage event's request id, once: the idempotency row the partitioned usage table cannot hold itself.

    Written by the ingest statement before the usage row (metering.ingest); its ``finished_at`` names the
    partition that holds the record.
    """

    request_id = models.CharField(max_length=64, primary_key=True)
    finished_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.request_id


class AccountKind(models.TextChoices):
    # Per tenant.
    AVAILABLE = "available", "Tenant available (prepaid funds; negative = owed on postpaid)"
    SPENT = "spent", "Tenant spent (the platform's revenue, per tenant)"
    # Platform.
    PROVIDER_COST = "provider_cost", "Provider cost (expense)"
    PROVIDER_PAYABLE = "provider_payable", "Provider cost payable"
    STRIPE_CLEARING = "stripe_clearing", "Stripe clearing (money received)"
    PROMOTIONS = "promotions", "Promotional credit (expense)"
    # Settlement beyond a hold on a prepaid balance (must not happen): what the tenant could not pay.
    HOLD_SHORTFALL = "hold_shortfall", "Hold shortfall (charged beyond a prepaid balance; uncollected)"
    # A refund or lost dispute of funds the tenant had already spent: what its balance could not return.
    REVERSAL_SHORTFALL = "reversal_shortfall", "Refund/dispute shortfall (already spent; unrecovered)"
    # Claimed back from providers: the cost of tokens a provider flagged for over-counting reported beyond the
    # true count (metering.provider_truth); the tenant was charged on the true count.
    PROVIDER_DISPUTE = "provider_dispute", "Provider dispute (over-counted tokens claimed back)"


TENANT_KINDS = (AccountKind.AVAILABLE, AccountKind.SPENT)


class Account(models.Model):
    """A ledger account: one per (tenant, kind), or a platform account (tenant null)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, null=True, related_name="ledger_accounts")
    kind = models.CharField(max_length=32, choices=AccountKind.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "kind"], name="uniq_account_tenant_kind"),
            models.UniqueConstraint(
                fields=["kind"], condition=models.Q(tenant__isnull=True), name="uniq_platform_account_kind"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tenant_id or 'platform'}:{self.kind}"


class Balance(models.Model):
    """Σ of the account's journal lines, updated in the same transaction as the lines."""

    account = models.OneToOneField(Account, on_delete=models.PROTECT, primary_key=True, related_name="balance")
    amount_micros = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.account_id}={self.amount_micros}"


class Journal(models.Model):
    """One business event on the ledger, applied once per idempotency key."""

    key = models.CharField(max_length=128)  # usage:<rid> | stripe:<evt> | topup:<id> | demo:<tid>; once: JournalKey
    kind = models.CharField(max_length=32)  # usage | topup | demo_credit | invoice_payment | adjustment
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, null=True, related_name="+")
    memo = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField()  # the partition column: posting time

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key", "created_at"], name="journal_key_once")]
        indexes = [
            BrinIndex(fields=["created_at"], name="journal_created_brin"),
            # Key prefixes are read by kind (topup:, refund:, invoice:<provider>:) in reconciliation and imports.
            models.Index(fields=["key"], name="journal_key_prefix", opclasses=["varchar_pattern_ops"]),
        ]

    def __str__(self) -> str:
        return self.key


class JournalKey(models.Model):
    """A journal's idempotency key, once across all partitions of the ledger (written by metering.ledger)."""

    key = models.CharField(max_length=128, primary_key=True)
    created_at = models.DateTimeField()  # the journal's: names its partition

    def __str__(self) -> str:
        return self.key


class JournalLine(models.Model):
    # No database foreign key: the journal's key is (id, created_at). The deferred balance trigger refuses a
    # line whose journal (same id and created_at) is not there at commit (migration 0011).
    journal = models.ForeignKey(Journal, on_delete=models.PROTECT, related_name="lines", db_constraint=False)
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="lines")
    amount_micros = models.BigIntegerField()  # signed; Σ per journal = 0
    created_at = models.DateTimeField()  # its journal's created_at: a journal and its lines share a partition

    class Meta:
        indexes = [models.Index(fields=["account"], name="line_account")]

    def __str__(self) -> str:
        return f"{self.journal_id}:{self.account_id}:{self.amount_micros}"


class LedgerCarry(models.Model):
    """Σ of an account's lines in ledger partitions detached by retention (metering.retention).

    An account's balance is its carry plus the Σ of its lines still attached; reconciliation checks that.
    """

    account = models.OneToOneField(Account, on_delete=models.PROTECT, primary_key=True, related_name="carry")
    amount_micros = models.BigIntegerField(default=0)
    through = models.DateTimeField()  # lines created before this are carried here, not in the ledger tables

    def __str__(self) -> str:
        return f"{self.account_id}={self.amount_micros}@{self.through:%Y-%m-%d}"


class TopUpStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class TopUp(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="topups")
    amount_micros = models.BigIntegerField()
    status = models.CharField(max_length=16, choices=TopUpStatus.choices, default=TopUpStatus.PENDING)
    payment_intent_id = models.CharField(max_length=64, unique=True, null=True)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"topup {self.pk} {self.amount_micros}"


class StripeEvent(models.Model):
    """Dedupe row of a webhook event, written in the transaction that applies it."""

    event_id = models.CharField(max_length=64, unique=True)
    type = models.CharField(max_length=64)
    created = models.BigIntegerField()  # Stripe's epoch seconds
    outcome = models.CharField(max_length=32)  # applied | ignored
    received_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.event_id


class MeterStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENT = "sent", "Accepted by Stripe"
    EXPIRED = "expired", "Not sent within the dedup window (reconciliation)"
    REJECTED = "rejected", "Rejected by Stripe"


class MeterEvent(models.Model):
    """Outbox of postpaid usage for Stripe's v2 meter event stream (identifier = request id)."""

    identifier = models.CharField(max_length=64, unique=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    customer_id = models.CharField(max_length=64)
    value = models.BigIntegerField()  # charge in micro-units
    timestamp = models.DateTimeField()  # when the usage happened
    status = models.CharField(max_length=16, choices=MeterStatus.choices, default=MeterStatus.PENDING)
    first_attempt_at = models.DateTimeField(null=True)
    attempts = models.PositiveIntegerField(default=0)
    sent_at = models.DateTimeField(null=True)
    last_error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["status", "created_at"], name="meter_status_created")]

    def __str__(self) -> str:
        return self.identifier


class SpendAlert(models.Model):
    """A tenant-chosen spend threshold for the current month; fired once per month."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="spend_alerts")
    threshold_micros = models.BigIntegerField()
    email = models.EmailField(blank=True)
    last_fired_month = models.CharField(max_length=6, blank=True)  # yyyymm

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "threshold_micros"], name="uniq_spend_alert")]

    def __str__(self) -> str:
        return f"{self.tenant_id}@{self.threshold_micros}"


class Notification(models.Model):
    """A console notification for a tenant (spend alerts, clamped usage)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=32)
    message = models.CharField(max_length=500)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"{self.tenant_id}:{self.kind}"


class ReconciliationFinding(models.Model):
    run_at = models.DateTimeField()
    check_name = models.CharField(max_length=64)
    severity = models.CharField(max_length=16)  # info | warning | error
    subject = models.CharField(max_length=200, blank=True)
    detail = models.JSONField(default=dict)
    resolved_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [models.Index(fields=["run_at"], name="finding_run_at")]

    def __str__(self) -> str:
        return f"{self.check_name}:{self.subject}"


class ReversalKind(models.TextChoices):
    REFUND = "refund", "Refund"
    DISPUTE = "dispute", "Dispute"


class PaymentReversal(models.Model):
    """A Stripe refund (re_…) or dispute (dp_…) of a payment, as last reported by its webhooks.

    The money moves in journals keyed by the Stripe object id (``metering.stripe.lifecycle``); this row is
    what reconciliation compares them with (a refund not applied, an unattributed reversal).
    """

    stripe_id = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=16, choices=ReversalKind.choices)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, null=True, related_name="+")  # null: unknown payment
    payment_intent_id = models.CharField(max_length=64, blank=True)
    charge_id = models.CharField(max_length=64, blank=True)
    amount_micros = models.BigIntegerField()
    status = models.CharField(max_length=32)  # Stripe's: refunds succeeded|pending|failed|canceled, disputes …|won|lost
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.stripe_id


class ProviderInvoiceLine(models.Model):
    """One line of a provider's invoice or usage export: a day, a model, tokens by kind, the amount billed.

    Imported by ``manage.py import_provider_invoice``; a re-import of the same (provider, day, model) replaces
    the line (providers revise exports). What it means for the books is a ledger journal
    (``metering.provider_invoices``); this row is what reconciliation compares with our usage records.
    """

    provider = models.CharField(max_length=63)  # the provider's slug
    day = models.DateField()  # UTC
    model = models.CharField(max_length=200)  # as the provider named it (our model slug or its upstream name)
    offering_id = models.BigIntegerField(null=True)  # resolved through the catalog; null = not ours
    input_tokens = models.BigIntegerField(default=0)  # every prompt token, cached or not
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)  # includes reasoning
    reasoning_tokens = models.BigIntegerField(default=0)
    amount_micros = models.BigIntegerField()
    source = models.CharField(max_length=200, blank=True)  # the imported file's name
    imported_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "day", "model"], name="uniq_invoice_line"),
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.day}:{self.model}"
