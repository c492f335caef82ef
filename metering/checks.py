"""Refuse to run in production without a Stripe webhook secret."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register


@register()
def stripe_webhook_secret_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if settings.IS_PRODUCTION and not settings.STRIPE_WEBHOOK_SECRET:
        return [
            Error(
                "STRIPE_WEBHOOK_SECRET is empty in production: webhooks could not be verified.",
                hint="Set STRIPE_WEBHOOK_SECRET (or STRIPE_WEBHOOK_SECRET_FILE).",
                id="metering.E001",
            )
        ]
    return []
