from django.apps import AppConfig


class MetricsServiceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metrics_service"
    verbose_name = "Metrics service"

    def ready(self) -> None:
        # The crowd side imports nothing of this app: it asks its port and sends signals, plugged in here.
        from annotate import metrics_port, signals
        from metrics_service import port

        metrics_port.register(port)
        signals.campaign_data_changed.connect(port.recompute_figures, dispatch_uid="metrics_service.recompute_figures")
        signals.summaries_added.connect(port.score_new_summaries, dispatch_uid="metrics_service.score_new_summaries")
