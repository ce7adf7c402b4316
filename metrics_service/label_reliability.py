"""Label aggregation of a campaign's judgements for the report, the API and the campaign page.

The statistics are in :mod:`metrics_service.stats.label_aggregation` (majority, Dawid–Skene, MACE); this
module reads the judgements and names workers as the caller may see them.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.models import Campaign, Item

from . import selectors
from .stats.label_aggregation import (
    DEFAULT_METHOD,
    aggregate,
    aggregate_all,
    method_comparison,
    reliability_table,
)
from .stats.redundancy import needs_more_workers


def _enough(judgements: pd.DataFrame) -> bool:
    """Aggregation needs sentences with at least two annotators."""
    return not judgements.empty and int(judgements.groupby(["summary_id", "sentence_index"]).size().max()) >= 2


def label_aggregation_section(campaign: Campaign, judgements: pd.DataFrame) -> dict | None:
    """The report's ``label_aggregation``: per method how the sentence labels compare with the majority,
    and per worker (pseudonym) the reliability of their factual labels and categories under each method."""
    if not _enough(judgements):
        return None
    aggregations = aggregate_all(judgements)
    table = reliability_table(aggregations)
    workers = [
        {"worker": worker_pseudonym(campaign.pk, int(worker_id)), **_numbers(row)}
        for worker_id, row in table.iterrows()
    ]
    for entry in workers:
        entry["n"] = int(entry["n"])
    return {"default": DEFAULT_METHOD, "methods": method_comparison(aggregations), "workers": workers}


def worker_reliability(campaign: Campaign) -> dict[int, dict[str, float]]:
    """``{worker id: {n, majority, majority_categories, dawid_skene, ..., mace_categories}}`` over the whole
    campaign: fits every label model, so a worker computes it (``metrics_service.figures``), never a request."""
    judgements = selectors.judgements_frame(campaign, selectors.Filters())
    if not _enough(judgements):
        return {}
    table = reliability_table(aggregate_all(judgements))
    return {int(w): _numbers(row) for w, row in table.iterrows()}


def _numbers(row: pd.Series) -> dict[str, float | None]:
    return {k: (None if pd.isna(v) else float(v)) for k, v in row.items()}


def _item_sentence_keys(campaign: Campaign) -> dict[int, list[int]]:
    """{item id: ids of the summaries it shows}: its own summary, or its document's judged summaries."""
    from annotate.models import Item, Summary

    by_document: dict[int, list[int]] = {}
    for summary_id, document_id in Summary.objects.filter(document__campaign=campaign, is_reference=False).values_list("pk", "document_id"):
        by_document.setdefault(document_id, []).append(summary_id)
    out = {}
    for pk, summary_id, document_id in Item.objects.filter(campaign=campaign, for_experts=False).values_list("pk", "summary_id", "document_id"):
        out[pk] = [summary_id] if summary_id else by_document.get(document_id, [])
    return out


def refit_campaign_labels(campaign: Campaign) -> dict:
    """Fit the campaign's ``label_model`` on all its judgements and store the outcome: one
    :class:`~annotate.models.SentenceLabel` per judged sentence (label, posterior, interval, difficulty),
    each participation's ``label_ability`` and ``label_reliability`` and, for adaptive campaigns, the stop
    rule's decision per item (:func:`apply_stop_rule`). Returns counts."""
    from django.db import connection, transaction

    from factlab.jobs import LABEL_REFIT_LOCK

    with transaction.atomic():
        if connection.vendor == "postgresql":
            # One refit of a campaign at a time (the debounced task, the beat): a slower one never overwrites
            # a newer one's decisions. Held until the end of this transaction.
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LABEL_REFIT_LOCK, campaign.pk])
        return _refit(campaign)


def _refit(campaign: Campaign) -> dict:
    from django.db import transaction

    from annotate.models import Participation, SentenceLabel

    judgements = selectors.judgements_frame(campaign, selectors.Filters())
    method = campaign.label_model
    result = aggregate(judgements, method) if not judgements.empty else None
    units = result.units if result is not None else pd.DataFrame(columns=["summary_id", "sentence_index"])
    labels = [
        SentenceLabel(
            summary_id=int(u.summary_id), sentence_index=int(u.sentence_index), method=method, n=int(u.n), factual=bool(u.factual),
            p_factual=float(u.p_factual), posterior=float(u.posterior), posterior_low=float(u.posterior_low),
            posterior_high=float(u.posterior_high), categories=list(u.categories), categories_posterior=float(u.categories_posterior),
            categories_low=float(u.categories_low), categories_high=float(u.categories_high),
            difficulty=None if pd.isna(u.difficulty) else float(u.difficulty),
        )
        for u in units.itertuples()
    ]
    posterior_by_summary = units.groupby("summary_id")["posterior"].min().to_dict() if labels else {}
    with transaction.atomic():
        SentenceLabel.objects.bulk_create(
            labels, batch_size=1000, update_conflicts=True, unique_fields=["summary", "sentence_index"],
            update_fields=["method", "n", "factual", "p_factual", "posterior", "posterior_low", "posterior_high", "categories",
                           "categories_posterior", "categories_low", "categories_high", "difficulty", "updated_at"],
        )
        if result is not None:
            reliability = result.reliability
            participations = list(Participation.objects.filter(campaign=campaign, worker_id__in=[int(w) for w in reliability.index]))
            for p in participations:
                row = reliability.loc[p.worker_id]
                p.label_ability, p.label_reliability = float(row["ability"]), float(row["factual"])
            Participation.objects.bulk_update(participations, ["label_ability", "label_reliability"], batch_size=1000)
    out = {"sentences": len(labels)}
    if campaign.adaptive_redundancy:
        workers_by_summary = judgements.groupby("summary_id")["worker_id"].agg(set).to_dict() if not judgements.empty else {}
        item_posteriors, item_workers = {}, {}
        for item_id, summary_ids in _item_sentence_keys(campaign).items():
            values = [posterior_by_summary[s] for s in summary_ids if s in posterior_by_summary]
            if values:
                item_posteriors[item_id] = min(values)
                item_workers[item_id] = len(set().union(*(workers_by_summary.get(s, set()) for s in summary_ids)))
        out.update(apply_stop_rule(campaign, item_posteriors, item_workers))
    return out


# The stop rule waits until this many items (or all) have min_workers judgements: a label model fitted on a
# handful of judgements per worker cannot yet tell an uncertain label from an unknown worker.
WARMUP_ITEMS = 20


def apply_stop_rule(campaign: Campaign, item_posteriors: Mapping[int, float], item_workers: Mapping[int, int]) -> dict[str, int]:
    """The adaptive-redundancy stop rule after a refit (claims read its decisions: ``annotate.services.adaptive``). Settle each item of an adaptive campaign or raise its worker target, from ``item_posteriors``
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
