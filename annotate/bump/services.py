"""Creating BUMP campaigns (both tasks) with BUMP's defaults."""
from __future__ import annotations

from annotate.models import Campaign
from annotate.protocols import kinds_of_family
from annotate.services.campaigns import create_campaign


def create_bump_campaign(slug: str, name: str, kind: str, *, exclusive_with: Campaign | None = None, **fields) -> Campaign:
    """Create a BUMP Task 1 (``bump_taxonomy``) or Task 2 (``bump_free``) campaign with BUMP's defaults.

    ``exclusive_with``: the Task 1 campaign whose qualification takers may not join (Task 2's exclusive pool).
    ``fields`` override the defaults (any Campaign field).
    """
    kinds = kinds_of_family("bump")
    if kind not in kinds:
        raise ValueError(f"{kind!r} is not a BUMP campaign kind; expected {' or '.join(kinds)}")
    return create_campaign(slug=slug, name=name, kind=kind, fields={**fields, "exclusive_with": exclusive_with})
