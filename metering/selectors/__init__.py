"""Reads for the API, the console and the operators' billing dashboard: plain dicts and lists.

One module per idea; every name is importable from ``metering.selectors`` as before.
"""

from __future__ import annotations

from metering.alerts import tenant_month_spend_micros as tenant_month_spend_micros  # re-exported: a read
from metering.cursors import BadCursor as BadCursor  # re-exported: generations_list raises it
from metering.selectors.books import BooksFigure as BooksFigure
from metering.selectors.books import account_drilldown as account_drilldown
from metering.selectors.books import books_reconciliation as books_reconciliation
from metering.selectors.books import provider_cost_adjustments as provider_cost_adjustments
from metering.selectors.drift import provider_drift as provider_drift
from metering.selectors.generations import GenerationFilter as GenerationFilter
from metering.selectors.generations import GenerationPage as GenerationPage
from metering.selectors.generations import cache_saved_micros as cache_saved_micros
from metering.selectors.generations import generation_costs_get as generation_costs_get
from metering.selectors.generations import generation_get as generation_get
from metering.selectors.generations import generations_list as generations_list
from metering.selectors.generations import key_summary as key_summary
from metering.selectors.limits_left import MonthlyLimit as MonthlyLimit
from metering.selectors.limits_left import spend_limits_left as spend_limits_left
from metering.selectors.operations import DISPUTE_LOST as DISPUTE_LOST
from metering.selectors.operations import OPS_TENANTS_SHOWN as OPS_TENANTS_SHOWN
from metering.selectors.operations import REFUNDED as REFUNDED
from metering.selectors.operations import billing_latency as billing_latency
from metering.selectors.operations import cash_overview as cash_overview
from metering.selectors.operations import findings_open as findings_open
from metering.selectors.operations import ledger_totals as ledger_totals
from metering.selectors.operations import platform_overview as platform_overview
from metering.selectors.operations import stripe_sync_status as stripe_sync_status
from metering.selectors.operations import tenant_meter_failures as tenant_meter_failures
from metering.selectors.operations import tenant_reversals as tenant_reversals
from metering.selectors.operations import tenants_billing_state as tenants_billing_state
from metering.selectors.served import tokens_served_by_offering as tokens_served_by_offering
from metering.selectors.tenant_billing import INVOICE_JOURNAL_KIND as INVOICE_JOURNAL_KIND
from metering.selectors.tenant_billing import INVOICE_KEY_PREFIX as INVOICE_KEY_PREFIX
from metering.selectors.tenant_billing import INVOICES_SHOWN as INVOICES_SHOWN
from metering.selectors.tenant_billing import NOTIFICATIONS_SHOWN as NOTIFICATIONS_SHOWN
from metering.selectors.tenant_billing import TOPUPS_SHOWN as TOPUPS_SHOWN
from metering.selectors.tenant_billing import TopUpShown as TopUpShown
from metering.selectors.tenant_billing import tenant_balance_micros as tenant_balance_micros
from metering.selectors.tenant_billing import tenant_invoices as tenant_invoices
from metering.selectors.tenant_billing import tenant_notifications as tenant_notifications
from metering.selectors.tenant_billing import tenant_spend_alerts as tenant_spend_alerts
from metering.selectors.tenant_billing import tenant_topup_get as tenant_topup_get
from metering.selectors.tenant_billing import tenant_topups as tenant_topups
from metering.selectors.tenant_billing import tenant_topups_shown as tenant_topups_shown
from metering.selectors.usage import USAGE_GROUPS as USAGE_GROUPS
from metering.selectors.usage import cache_savings_micros as cache_savings_micros
from metering.selectors.usage import tenant_usage as tenant_usage
