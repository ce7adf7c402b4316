"""Handing out control items: how often a worker's claims prefer an item holding gold.

Gold itself is :mod:`annotate.services.gold`, the balanced score it gives :mod:`annotate.services.quality`,
the word overlap they are stratified by :mod:`annotate.services.overlap`, and what the page alone predicts of
the gold :mod:`annotate.services.gold_predictability`. Their public names are importable from here too, the
one place callers (tests, benchmarks, the API) have always found them.
"""
from __future__ import annotations

import random

from annotate.models import Campaign, Item

from .gold import (
    MIN_CROWD_WORKERS,
    MIN_IMPORTED_VOTES,
    campaign_has_checks,
    gold_from_crowd,
    gold_from_imported_labels,
    mark_gold_public,
    refresh_control_items,
    remove_gold_label,
    set_gold_label,
)
from .gold_predictability import (
    PAGE_FEATURES,
    PREDICTABILITY_WARNING,
    Predictability,
    Predictor,
    cached_gold_predictability,
    gold_page_features,
    gold_predictability,
)
from .overlap import (
    OVERLAP_BANDS,
    article_vocabularies,
    overlap_band,
    record_overlaps,
    sentence_overlap,
    sentence_page_features,
    summary_sentences,
)
from .quality import (
    RECENT_CHECKS_PER_CLASS,
    Check,
    Quality,
    balanced_score,
    describe_recent,
    private_quality,
    quality_block_reason,
    recent_checks,
    recent_quality,
    scored_checks,
    worker_checks,
    worker_quality,
    worker_recent_quality,
)

__all__ = [
    "MIN_CROWD_WORKERS", "MIN_IMPORTED_VOTES", "OVERLAP_BANDS", "PAGE_FEATURES", "PREDICTABILITY_WARNING",
    "RECENT_CHECKS_PER_CLASS", "Check", "Predictability", "Predictor", "Quality", "arrange_candidates",
    "article_vocabularies", "balanced_score", "cached_gold_predictability", "campaign_has_checks", "describe_recent",
    "gold_from_crowd", "gold_from_imported_labels", "gold_page_features", "gold_predictability", "mark_gold_public",
    "overlap_band", "private_quality", "quality_block_reason", "recent_checks", "recent_quality", "record_overlaps",
    "refresh_control_items", "remove_gold_label", "scored_checks", "sentence_overlap", "sentence_page_features",
    "set_gold_label", "summary_sentences", "worker_checks", "worker_quality", "worker_recent_quality",
]


def arrange_candidates(campaign: Campaign, candidates: list[Item], rng: random.Random | None = None) -> list[Item]:
    """Order a claim's candidate window so that about ``control_share`` of a worker's items are control items.

    Each claim draws, independently and at random, whether it prefers a control item (probability
    ``control_share``) or a plain one; items of the preferred kind come first, the window's order kept
    within each kind. So control items come at random positions in each worker's sequence (not every k-th),
    and a window holding only one kind is served as it is.
    """
    if len({item.is_control for item in candidates}) < 2:
        return candidates
    share = campaign.control_share
    want_control = share >= 1 or (share > 0 and (rng or random).random() < share)
    return sorted(candidates, key=lambda item: item.is_control != want_control)  # stable: window order kept
