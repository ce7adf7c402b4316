from annotate import kinds


class SpansConfig(kinds.ProtocolAppConfig):
    """Typed error spans: answers, gold spans and detectors' word scores in the app's own tables."""

    name = "annotate.spans"
    label = "spans"
    verbose_name = "Typed error spans"
    protocols = ("annotate.spans.protocol:SpansProtocol",)
