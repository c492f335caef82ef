from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from frontend.views import (
    console_billing,
    console_home,
    console_keys,
    console_playground,
    console_settings,
    console_team,
    console_usage,
    leaderboard,
    ops,
)

app_name = "frontend"

tenant = "console/<slug:slug>/"

urlpatterns: list[URLPattern | URLResolver] = [
    path("", leaderboard.index, name="home"),
    path("leaderboard/", leaderboard.index, name="leaderboard"),
    path("leaderboard/rows/", leaderboard.rows_fragment, name="leaderboard-rows"),
    path("leaderboard/data.json", leaderboard.rows_json, name="leaderboard-json"),
    path("leaderboard/trend.json", leaderboard.trend_json, name="leaderboard-trend"),
    path("leaderboard/definitions/", leaderboard.definitions, name="definitions"),
    path("models/<str:slug>/", leaderboard.model_detail, name="model"),
    path("offerings/<int:offering_id>/", leaderboard.offering_detail, name="offering"),
    path("providers/<slug:slug>/", leaderboard.provider_detail, name="provider"),
    path("console/", console_home.console_index, name="console"),
    path("console/new/", console_home.tenant_new, name="tenant-new"),
    path(tenant, console_home.overview, name="overview"),
    path(tenant + "summary/", console_usage.live_summary, name="summary"),
    path(tenant + "keys/", console_keys.keys, name="keys"),
    path(tenant + "keys/<int:key_id>/revoke/", console_keys.key_revoke, name="key-revoke"),
    path(tenant + "keys/<int:key_id>/rotate/", console_keys.key_rotate, name="key-rotate"),
    path(tenant + "team/", console_team.team, name="team"),
    path(
        tenant + "team/invitations/<int:invitation_id>/revoke/",
        console_team.invitation_cancel,
        name="invitation-revoke",
    ),
    path(tenant + "team/members/<int:member_id>/", console_team.member_update, name="member-update"),
    path(tenant + "credentials/", console_settings.credentials, name="credentials"),
    path(
        tenant + "credentials/<int:credential_id>/delete/", console_settings.credential_remove, name="credential-delete"
    ),
    path(tenant + "routing/", console_settings.routing_prefs, name="routing"),
    path(tenant + "billing/", console_billing.billing, name="billing"),
    path(tenant + "billing/topup/", console_billing.topup, name="topup"),
    path(tenant + "billing/topups/<int:topup_id>/", console_billing.topup_status, name="topup-status"),
    path(tenant + "billing/alerts/", console_billing.alert_add, name="alert-add"),
    path(tenant + "billing/alerts/<int:alert_id>/delete/", console_billing.alert_remove, name="alert-delete"),
    path(tenant + "usage/", console_usage.usage, name="usage"),
    path(tenant + "requests/", console_usage.requests_log, name="requests"),
    path(tenant + "requests/<str:request_id>/", console_usage.request_detail, name="request"),
    path(tenant + "playground/", console_playground.playground, name="playground"),
    path(tenant + "playground/key/", console_playground.playground_key, name="playground-key"),
    path("ops/billing/", ops.billing_dashboard, name="ops-billing"),
    path("ops/billing/tenants/<int:tenant_id>/", ops.tenant_detail, name="ops-tenant"),
    path("ops/billing/accounts/<slug:kind>/", ops.account_detail, name="ops-account"),
    path("ops/requests/<str:request_id>/", ops.request_detail, name="ops-request"),
]
