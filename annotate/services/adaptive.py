"""Adaptive redundancy: how many workers an item may have, and the stop rule applied after a refit.

A campaign with ``adaptive_redundancy`` gives each item ``min_workers`` first. Its label model is refitted
off the request path (a Celery task, debounced after submits, and the beat schedule); the refit calls
:func:`apply_stop_rule`, which, per item, either settles it (its least certain label's posterior reached
``stop_posterior``, or it has ``max_workers``) or raises its ``worker_target`` to one more than its
submitted judgements. Claims read the target under the item's row lock (:func:`slot_limit`), so every
guarantee of ``services.assignments`` (no repeat, expiry, row locks, flat cost) holds as for a fixed K.
Campaigns without it keep their fixed ``redundancy``.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Q

from annotate.models import Campaign, Item
from factlab.jobs import send_after_commit
from metrics_service.stats.redundancy import needs_more_workers

REFIT_TASK = "metrics_service.refit_labels"
# The stop rule waits until this many items (or all) have min_workers judgements: a label model fitted on a
# handful of judgements per worker cannot yet tell an uncertain label from an unknown worker.
WARMUP_ITEMS = 20


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


def schedule_refit(campaign: Campaign) -> None:
    """After a submit in an adaptive campaign: queue one refit of its label model, at most one per
    ``FACTLAB_LABEL_REFIT_DEBOUNCE_SECONDS`` (the first submit of a quiet spell queues it, delayed by that
    time, so the refit sees the submits that follow). Sent after the commit; the beat schedule catches a
    lost one. Without a broker (eager mode) the refit runs after the commit, outside the submit's locks."""
    if not campaign.adaptive_redundancy:
        return
    delay = settings.FACTLAB_LABEL_REFIT_DEBOUNCE_SECONDS
    if not cache.add(f"factlab:refit-queued:{campaign.pk}", 1, timeout=max(int(delay), 1)):
        return
    from celery import current_app

    if REFIT_TASK not in current_app.tasks:  # tasks modules are imported lazily (autodiscovery)
        current_app.loader.import_default_modules()
    task = current_app.tasks[REFIT_TASK]
    if current_app.conf.task_always_eager:
        transaction.on_commit(lambda: task.apply(args=[campaign.pk]))
        return
    send_after_commit(lambda: task.apply_async(args=[campaign.pk], countdown=delay), what=f"label refit of campaign {campaign.slug}")


def apply_stop_rule(campaign: Campaign, item_posteriors: Mapping[int, float], item_workers: Mapping[int, int]) -> dict[str, int]:
    """Settle each item of an adaptive campaign or raise its worker target, from ``item_posteriors``
    ({item id: posterior of its least certain label}) and ``item_workers`` ({item id: workers who judged
    it}), both from the same judgements (the refit's snapshot: counting submits that arrived during the fit
    would pair a new count with an old posterior). Items without judgements are absent. Writes the items
    whose state changed and ``label_posterior``; returns counts of ``settled`` and ``open`` items."""
    items = list(Item.objects.filter(campaign=campaign, for_experts=False).values_list("pk", "worker_target", "settled", "label_posterior"))
    if not items:
        return {"settled": 0, "open": 0}
    submitted = item_workers
    ids = np.array([pk for pk, *_ in items])
    n = np.array([submitted.get(pk, 0) for pk in ids])
    posterior = np.array([item_posteriors.get(int(pk), np.nan) for pk in ids], dtype=float)
    more = needs_more_workers(posterior, n, min_workers=campaign.min_workers, max_workers=campaign.max_workers,
                              threshold=campaign.stop_posterior)
    if (n >= campaign.min_workers).sum() < min(WARMUP_ITEMS, len(items)):
        # Too few items with their minimum for the model to know its workers: nobody gets more than the minimum yet.
        more = n < campaign.min_workers
    target = np.where(n < campaign.min_workers, campaign.min_workers, np.where(more, n + 1, n))
    changed = []
    for (pk, old_target, old_settled, old_posterior), new_target, is_open, p in zip(items, target, more, posterior, strict=True):
        new_posterior = None if np.isnan(p) else float(p)
        if (old_target, old_settled, old_posterior) != (int(new_target), not is_open, new_posterior):
            changed.append(Item(pk=pk, worker_target=int(new_target), settled=not bool(is_open), label_posterior=new_posterior))
    # Only these three columns are written: claims write live_count under the row lock, so neither loses the other's update.
    Item.objects.bulk_update(changed, ["worker_target", "settled", "label_posterior"], batch_size=1000)
    return {"settled": int((~more).sum()), "open": int(more.sum())}
