from django.apps import AppConfig


class PublishingConfig(AppConfig):
    name = "publishing"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from outbox.services import drainer_set
        from publishing.drain import outbox_drain

        drainer_set(outbox_drain)  # outbox rows are published as soon as their transaction commits
