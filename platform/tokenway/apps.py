from django.apps import AppConfig


class TokenwayConfig(AppConfig):
    """The project package as an app: its Celery tasks are discovered, and once every app is loaded it puts
    every domain's figures on the page this process serves (a worker's metrics port, a management command's)."""

    name = "tokenway"

    def ready(self) -> None:
        from tokenway import metrics  # noqa: F401  (sets the process page)
