"""Campaign lifecycle."""
from __future__ import annotations

from django.utils import timezone

from annotate.models import Campaign, CampaignStatus

ALLOWED_TRANSITIONS: dict[str, set[str]] = {
    CampaignStatus.DRAFT: {CampaignStatus.RUNNING, CampaignStatus.FINISHED},
    CampaignStatus.RUNNING: {CampaignStatus.PAUSED, CampaignStatus.FINISHED},
    CampaignStatus.PAUSED: {CampaignStatus.RUNNING, CampaignStatus.FINISHED},
    CampaignStatus.FINISHED: set(),
}


class CampaignStateError(ValueError):
    pass


def set_campaign_status(campaign: Campaign, status: str) -> Campaign:
    """Move a campaign to ``status`` (start, pause, resume, finish); refuses impossible transitions."""
    if status == campaign.status:
        return campaign
    if status not in ALLOWED_TRANSITIONS.get(campaign.status, set()):
        raise CampaignStateError(f"a {campaign.status} campaign cannot become {status}")
    campaign.status = status
    now = timezone.now()
    if status == CampaignStatus.RUNNING and campaign.started_at is None:
        campaign.started_at = now
    if status == CampaignStatus.FINISHED:
        campaign.finished_at = now
    campaign.save(update_fields=["status", "started_at", "finished_at", "updated_at"])
    return campaign


# BUMP campaigns (Ma et al., 2023): no tutorial, a qualification that must be answered without a mistake,
# each (summary, type) edited once, no control sentences.
BUMP_DEFAULTS: dict[str, object] = {
    "tutorial_required": False,
    "qualification_required": True,
    "qualification_pass_score": 1.0,
    "redundancy": 1,
    "trap_rate": 0.0,
    "entity_check_enabled": False,
    "max_edit_distance": 6,
}


def create_bump_campaign(slug: str, name: str, kind: str, *, exclusive_with: Campaign | None = None, **settings) -> Campaign:
    """Create a BUMP Task 1 (``bump_taxonomy``) or Task 2 (``bump_free``) campaign with BUMP's defaults.

    ``exclusive_with``: the Task 1 campaign whose qualification takers may not join (Task 2's exclusive pool).
    ``settings`` override the defaults (any Campaign field).
    """
    from annotate.models import CampaignKind

    if kind not in (CampaignKind.BUMP_TAXONOMY, CampaignKind.BUMP_FREE):
        raise ValueError(f"{kind!r} is not a BUMP campaign kind; expected bump_taxonomy or bump_free")
    fields = {**BUMP_DEFAULTS, **settings}
    return Campaign.objects.create(slug=slug, name=name, kind=kind, exclusive_with=exclusive_with, **fields)
