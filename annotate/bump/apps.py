from annotate import kinds


class BumpConfig(kinds.ProtocolAppConfig):
    name = "annotate.bump"
    label = "bump"
    verbose_name = "BUMP summary edits"
    protocols = ("annotate.bump.protocol:BumpTaxonomyProtocol", "annotate.bump.protocol:BumpFreeProtocol")
