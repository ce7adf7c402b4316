"""A trap takes the place of a summary sentence: the page's counts (sentences, words, data set) do not tell it."""
from __future__ import annotations

import pytest

from benchmarks.trap_style_auc import (
    count_rows,
    cross_validated_auc,
    dataset_of,
    feature_aucs,
    load_articles,
)


@pytest.mark.slow
def test_a_trap_leaves_the_sentence_count_and_length_of_frank_xsum_summaries_as_they_were(frank_dir):
    datasets = dataset_of(frank_dir)
    articles = [a for a in load_articles(frank_dir, None) if datasets.get(a[0]) == "bbc"][:150]
    before_X, before_y, _ = count_rows(articles, datasets, "before")
    X, y, groups = count_rows(articles, datasets, "after")
    assert 0.3 < y.mean() < 0.7 and len(y) > 400
    # Appended, a second sentence on an XSum page was a trap (most XSum summaries have one sentence).
    assert feature_aucs(before_X, before_y, ("sentences", "words"))["sentences"] > 0.9
    # In place of a sentence: every summary shows its own number of sentences, and its length barely moves.
    after = feature_aucs(X, y, ("sentences", "words"))
    assert after["sentences"] < 0.55  # chance (which summaries carry a trap is drawn at random)
    assert after["words"] < 0.6
    assert max(cross_validated_auc(X[:, :2], y, groups).values()) < 0.6
