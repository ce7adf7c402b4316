"""The registry of campaign kinds: one line per kind, naming its protocol class and its label.

A plain data module (it imports nothing), so that the models can offer the kinds as choices and
``annotate.protocols`` can load a kind's protocol without either importing the other.
"""
from __future__ import annotations

# campaign kind -> ("module:ProtocolClass", label shown to admins)
PROTOCOLS: dict[str, tuple[str, str]] = {
    "frank": ("annotate.frank.protocol:FrankProtocol", "FRANK sentence annotation"),
    "bump_taxonomy": ("annotate.bump.protocol:BumpTaxonomyProtocol", "BUMP taxonomy edit (Task 1)"),
    "bump_free": ("annotate.bump.protocol:BumpFreeProtocol", "BUMP free edit (Task 2)"),
}


def kind_choices() -> list[tuple[str, str]]:
    """The registered kinds as field choices (read at each use, so a registered protocol shows at once)."""
    return [(kind, label) for kind, (_, label) in PROTOCOLS.items()]
