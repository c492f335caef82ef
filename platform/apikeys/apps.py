from django.apps import AppConfig


class ApikeysConfig(AppConfig):
    name = "apikeys"
    default_auto_field = "django.db.models.BigAutoField"
