"""Adaptive redundancy: how many workers an item may have, and the stop rule applied after a refit.

A campaign with ``adaptive_redundancy`` gives each item ``min_workers`` first. Its label model is refitted
off the request path (a Celery task, debounced after submits, and the beat schedule); the refit applies
the stop rule (``metrics_service.label_reliability.apply_stop_rule``, its one owner), which, per item, either settles it (its least certain label's posterior reached
``stop_posterior``, or it has ``max_workers``) or raises its ``worker_target`` to one more than its
submitted judgements. Claims read the target under the item's row lock (:func:`slot_limit`), so every
guarantee of ``services.assignments`` (no repeat, expiry, row locks, flat cost) holds as for a fixed K.
Campaigns without it keep their fixed ``redundancy``.
"""
from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Q

from annotate.models import Campaign, Item
from factlab.jobs import send_after_commit

REFIT_TASK = "metrics_service.refit_labels"


def slot_limit(campaign: Campaign, item: Item) -> int:
    """How many live (active or submitted) assignments the item may have now."""
    if not campaign.adaptive_redundancy:
        return campaign.redundancy
    if item.settled:
        return 0
    return min(item.worker_target or campaign.min_workers, campaign.max_workers)


def open_items_filter(campaign: Campaign) -> Q:
    """Items with a free slot (the claim's candidate filter). Adaptive: unsettled items below their target;
    settled ones are skipped through the ``item_adaptive_claim_order`` index. Items at their target wait for
    the next refit; there are at most as many as judgements submitted since it, whatever the campaign's size."""
    if not campaign.adaptive_redundancy:
        return Q(live_count__lt=campaign.redundancy)
    below_target = Q(worker_target__isnull=True, live_count__lt=campaign.min_workers) | Q(live_count__lt=F("worker_target"))
    return Q(settled=False, live_count__lt=campaign.max_workers) & below_target


def refit_queued_key(campaign_id: int) -> str:
    """The cache key that marks a refit of the campaign's label model as queued (the debounce of :func:`schedule_refit`)."""
    return f"factlab:refit-queued:{campaign_id}"


def schedule_refit(campaign: Campaign) -> None:
    """After a submit in an adaptive campaign: queue one refit of its label model, at most one per
    ``FACTLAB_LABEL_REFIT_DEBOUNCE_SECONDS`` (the first submit of a quiet spell queues it, delayed by that
    time, so the refit sees the submits that follow). Sent after the commit; the beat schedule catches a
    lost one. Without a broker (eager mode) the refit runs after the commit, outside the submit's locks."""
    if not campaign.adaptive_redundancy:
        return
    delay = settings.FACTLAB_LABEL_REFIT_DEBOUNCE_SECONDS
    if not cache.add(refit_queued_key(campaign.pk), 1, timeout=max(int(delay), 1)):
        return
    from celery import current_app

    if REFIT_TASK not in current_app.tasks:  # tasks modules are imported lazily (autodiscovery)
        current_app.loader.import_default_modules()
    task = current_app.tasks[REFIT_TASK]
    if current_app.conf.task_always_eager:
        transaction.on_commit(lambda: task.apply(args=[campaign.pk]))
        return
    send_after_commit(lambda: task.apply_async(args=[campaign.pk], countdown=delay), what=f"label refit of campaign {campaign.slug}")
