from django.apps import AppConfig


class DemodataConfig(AppConfig):
    name = "demodata"
    default_auto_field = "django.db.models.BigAutoField"
