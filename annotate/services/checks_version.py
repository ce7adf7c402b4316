"""The campaign's checks version: raised by every change of gold or traps, so that the counts of checked answers
kept per participation under an older version are counted again before they are read
(:mod:`annotate.services.check_counts`). Its own module since the modules that change gold and traps (overlaps
among them) are below the quality score the counts feed."""
from __future__ import annotations

from django.db.models import F

from annotate.models import Campaign


def checks_changed(campaign: Campaign | int) -> None:
    """Gold or traps of the campaign changed: the counts kept under the current version are counted again before
    they are next read. One statement; in the caller's transaction, so a submission that read the old version
    writes counts that the next one recounts."""
    campaign_id = campaign if isinstance(campaign, int) else campaign.pk
    Campaign.objects.filter(pk=campaign_id).update(checks_version=F("checks_version") + 1)
