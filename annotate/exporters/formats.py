"""Which export format fits which campaign kind: a format that does not fit is refused with the reason."""
from __future__ import annotations

from annotate.models import CampaignKind

EXPORT_FORMATS = ("frank", "bump", "jsonl", "csv", "parquet")
# Formats tied to one protocol's data; the others (rows of judgements, edits and scores) fit every kind.
PROTOCOL_FORMATS: dict[str, tuple[str, ...]] = {
    "frank": (CampaignKind.FRANK,),
    "bump": (CampaignKind.BUMP_TAXONOMY, CampaignKind.BUMP_FREE),
}
WHAT = {"frank": "FRANK's data folder (sentence judgements and summary scores)", "bump": "BUMP's minimal pairs"}


def formats_for(kind: str) -> list[str]:
    return [f for f in EXPORT_FORMATS if f not in PROTOCOL_FORMATS or kind in PROTOCOL_FORMATS[f]]


def format_misfit(fmt: str, kind: str) -> str | None:
    """Why ``fmt`` cannot export a campaign of ``kind``, or None when it can."""
    kinds = PROTOCOL_FORMATS.get(fmt)
    if kinds is None or kind in kinds:
        return None
    return (
        f"format={fmt} writes {WHAT[fmt]}, which a {kind} campaign does not have; "
        f"formats for a {kind} campaign: {', '.join(formats_for(kind))}"
    )
