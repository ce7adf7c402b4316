from annotate import kinds


class FrankConfig(kinds.ProtocolAppConfig):
    name = "annotate.frank"
    label = "frank"
    verbose_name = "FRANK sentence annotation"
    protocols = ("annotate.frank.protocol:FrankProtocol",)
