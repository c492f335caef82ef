from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from evaluation import worker_region  # noqa: F401 - connects the worker_ready handler
