"""Celery tasks of the label models: refits of a campaign's labels off the request path (after submits,
debounced, and on the beat schedule; see ``annotate.services.adaptive``). Apart from ``tasks`` so that the
shared mechanism reaching ``tasks`` does not reach the label statistics (and FRANK's typology) too."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="metrics_service.refit_labels", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def refit_labels(campaign_id: int) -> dict:
    """Refit a campaign's label model: store every sentence label with its posterior, worker abilities and,
    for adaptive campaigns, settle items or ask for more workers (:func:`label_reliability.refit_campaign_labels`)."""
    from annotate.models import Campaign

    from .label_refits import refit_done
    from .label_reliability import refit_campaign_labels

    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return {}
    try:
        return refit_campaign_labels(campaign)
    finally:
        refit_done(campaign)


@shared_task(name="metrics_service.refit_adaptive_labels", ignore_result=True)
def refit_adaptive_labels() -> int:
    """Beat: refit every running adaptive campaign (a debounced refit message may have been lost)."""
    from annotate.models import Campaign, CampaignStatus

    from .label_reliability import refit_campaign_labels

    campaigns = Campaign.objects.filter(status=CampaignStatus.RUNNING, adaptive_redundancy=True)
    return sum(1 for campaign in campaigns if refit_campaign_labels(campaign) is not None)
