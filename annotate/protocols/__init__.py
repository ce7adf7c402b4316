"""Task protocols: what a campaign kind shows and how it stores a submission.

The shared workflow (assignments, qualification bookkeeping, quality rules, bonuses) lives in
``annotate.services``; each campaign kind plugs in one :class:`~annotate.protocols.base.Protocol`.
"""
from __future__ import annotations

import importlib

from .base import Protocol, SubmissionResult

# campaign kind -> "module:Class"
PROTOCOLS: dict[str, str] = {
    "frank": "annotate.frank.protocol:FrankProtocol",
    "bump_taxonomy": "annotate.bump.protocol:BumpTaxonomyProtocol",
    "bump_free": "annotate.bump.protocol:BumpFreeProtocol",
}


def protocol_for(kind: str) -> Protocol:
    if kind not in PROTOCOLS:
        raise ValueError(f"no protocol for campaign kind {kind!r}")
    module_name, class_name = PROTOCOLS[kind].split(":")
    return getattr(importlib.import_module(module_name), class_name)()


__all__ = ["PROTOCOLS", "Protocol", "SubmissionResult", "protocol_for"]
