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
