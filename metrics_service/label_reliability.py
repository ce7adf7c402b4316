"""Label aggregation of a campaign's judgements for the report, the API and the campaign page.

The statistics are in :mod:`metrics_service.stats.label_aggregation` (majority, Dawid–Skene, MACE); this
module reads the judgements, names workers as the caller may see them, and caches per campaign state.
"""
from __future__ import annotations

import hashlib

import pandas as pd
from django.core.cache import cache

from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.models import Campaign

from . import selectors
from .stats.label_aggregation import (
    DEFAULT_METHOD,
    aggregate_all,
    method_comparison,
    reliability_table,
)

CACHE_SECONDS = 24 * 3600


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
        {"worker": worker_pseudonym(campaign.pk, int(worker_id)), **{k: (None if pd.isna(v) else float(v)) for k, v in row.items()}}
        for worker_id, row in table.iterrows()
    ]
    for entry in workers:
        entry["n"] = int(entry["n"])
    return {"default": DEFAULT_METHOD, "methods": method_comparison(aggregations), "workers": workers}


def campaign_worker_reliability(campaign: Campaign) -> dict[int, dict[str, float]]:
    """``{worker id: {n, majority, majority_categories, dawid_skene, ..., mace_categories}}`` over the whole
    campaign, cached per campaign state (a new judgement recomputes it)."""
    state = hashlib.sha1(repr(selectors.state_fingerprint(campaign)).encode()).hexdigest()
    key = f"factlab:reliability:{campaign.pk}:{state}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    judgements = selectors.judgements_frame(campaign, selectors.Filters())
    out: dict[int, dict[str, float]] = {}
    if _enough(judgements):
        table = reliability_table(aggregate_all(judgements))
        out = {int(w): {k: (None if pd.isna(v) else float(v)) for k, v in row.items()} for w, row in table.iterrows()}
    cache.set(key, out, CACHE_SECONDS)
    return out
