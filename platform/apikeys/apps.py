from django.apps import AppConfig


class ApikeysConfig(AppConfig):
    name = "apikeys"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apikeys import schema  # noqa: F401 - registers the OpenAPI auth extension
