from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from evaluation import startup, worker_region  # noqa: F401 - connect the beat_init / worker_ready handlers
