from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class MeteringConfig(AppConfig):
    name = "metering"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from metering import checks  # noqa: F401  (registers the system check)
        from metering.gateway_counters import COUNTERS
        from publishing.money_counters import money_counters_plug

        money_counters_plug(COUNTERS)  # publishing publishes the gateway's money counters through metering

        # ASGI servers and Celery workers do not run system checks: refuse here as well.
        if settings.IS_PRODUCTION and not settings.STRIPE_WEBHOOK_SECRET:
            raise ImproperlyConfigured("STRIPE_WEBHOOK_SECRET must be set in production")
