from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotate"
    verbose_name = "Annotation campaigns"

    def ready(self) -> None:
        from annotate.api import authentication  # noqa: F401  (connects the token-revocation signal)
        from annotate.services import campaign_refs

        campaign_refs.connect()
