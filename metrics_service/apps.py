from django.apps import AppConfig


class MetricsServiceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metrics_service"
    verbose_name = "Metrics service"
