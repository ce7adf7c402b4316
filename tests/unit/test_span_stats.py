"""Span statistics (no database): snapping, merging, AggreFact's type rule, token alpha, span F1, and word-level
detection figures checked against scikit-learn and the krippendorff package computed independently."""
from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from metrics_service.stats import spans as S
from metrics_service.stats.token_detection import ANY_ERROR, detection_cell, token_auc, token_detection_report
from taxonomies.unified import UNIFIED_TYPES

EXT, INT, PRED = "extrinsic_np", "intrinsic_np", "extrinsic_predicate"


def test_snapping_takes_every_touched_word_and_refuses_spaces_and_empty_ranges():
    text = "Police arrested two men  near the bank."
    tokens = S.word_tokens(text)
    assert [text[a:b] for a, b in tokens] == ["Police", "arrested", "two", "men", "near", "the", "bank", "."]
    assert S.snap(tokens, text.index("rested"), text.index("rested") + 3) == (1, 2)
    assert S.snap(tokens, text.index("two"), text.index("near") + 1) == (2, 5)
    for start, end in [(23, 25), (10, 10), (100, 104)]:
        with pytest.raises(ValueError, match="cover no word"):
            S.snap(tokens, start, end)


def test_merging_joins_overlaps_of_one_type_only_and_is_idempotent():
    spans = [(2, 4, EXT), (3, 6, EXT), (6, 7, EXT), (3, 5, INT), (0, 1, PRED), (0, 1, PRED)]
    merged = S.merge_spans(spans)
    assert merged == [(3, 5, INT), (2, 6, EXT), (6, 7, EXT), (0, 1, PRED)]
    assert S.merge_spans(merged) == merged
    with pytest.raises(ValueError, match="unknown error type 'EntE'"):
        S.merge_spans([(0, 1, "EntE")])


def test_a_summary_gets_a_type_when_more_than_one_annotator_marked_it_and_the_rule_is_configurable():
    answers = [[(0, 1, EXT), (2, 3, EXT)], [(5, 6, EXT)], [(1, 2, INT)], []]
    assert S.summary_types(answers) == (EXT,)
    assert S.summary_types(answers, min_annotators=1) == (INT, EXT)
    assert S.summary_types(answers, min_annotators=3) == ()


def _answers(rows):
    return pd.DataFrame(rows, columns=["summary_id", "worker_id", "n_tokens", "spans"])


def test_token_alpha_equals_the_krippendorff_package_on_the_token_matrix():
    rows = [
        (1, 7, 5, [(1, 3, EXT)]), (1, 8, 5, [(1, 2, EXT)]), (1, 9, 5, [(0, 5, "entire_sentence")]),
        (2, 7, 4, []), (2, 8, 4, [(3, 4, PRED)]),
        (3, 9, 3, [(0, 1, INT)]),  # one annotator: no pair, does not count
    ]
    value = S.token_alpha(_answers(rows))
    # The same matrix written by hand: annotators x tokens of summaries 1 and 2, codes 0 none, 1 EXT, 2 entire, 3 PRED.
    nan = np.nan
    matrix = np.array([
        [0, 1, 1, 0, 0, 0, 0, 0, 0],
        [0, 1, 0, 0, 0, 0, 0, 0, 3],
        [2, 2, 2, 2, 2, nan, nan, nan, nan],
    ])
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert value == pytest.approx(expected)
    assert S.token_alpha(_answers([(3, 9, 3, [(0, 1, INT)])])) is None


def test_pairwise_span_f1_exact_and_overlap_by_hand():
    rows = pd.DataFrame({
        "summary_id": [1, 1, 2, 2],
        "worker_id": [7, 8, 7, 8],
        "spans": [[(0, 2, EXT), (4, 5, PRED)], [(0, 2, EXT), (4, 6, PRED)], [], []],
    })
    f1 = S.pairwise_span_f1(rows)
    # Summary 1: one exact match of two spans each side; both overlap. Summary 2: two "no error" answers count nothing.
    assert f1 == {"exact": pytest.approx(0.5), "overlap": pytest.approx(1.0), "pairs": 2}
    model = pd.DataFrame({"summary_id": [1], "spans": [[(1, 2, INT)]]})
    assert S.pairwise_span_f1(rows, against=model) == {"exact": 0.0, "overlap": 0.0, "pairs": 2}
    assert S.span_f1([], []) is None
    with pytest.raises(ValueError, match="unknown span match mode"):
        S.span_f1([(0, 1, EXT)], [], "fuzzy")


def test_pairwise_span_f1_does_not_depend_on_the_order_of_the_rows():
    # Two short spans inside one long one: as predictions both overlap, as the reference one long span is found,
    # so the pair's counts differ with the side each answer takes; the annotators decide the sides, not the rows.
    rows = pd.DataFrame({"summary_id": [1, 1, 2, 2], "worker_id": ["human:12", "human:9", "human:9", "human:12"],
                         "spans": [[(0, 6, EXT)], [(0, 2, EXT), (3, 5, EXT)], [(1, 2, PRED)], [(0, 4, PRED), (6, 7, PRED)]]})
    first = S.pairwise_span_f1(rows)
    for order in ([3, 2, 1, 0], [1, 0, 2, 3], [0, 1, 3, 2]):
        assert S.pairwise_span_f1(rows.iloc[order].reset_index(drop=True)) == first


def test_majority_answers_keep_words_two_annotators_share_and_agree_with_the_summary_rule():
    rows = [(1, 7, 6, [(0, 3, EXT)]), (1, 8, 6, [(1, 4, EXT), (5, 6, PRED)]), (1, 9, 6, [])]
    majority = S.majority_answers(_answers(rows))
    assert majority["spans"].tolist() == [[(1, 3, EXT)]]
    assert S.summary_types([spans for *_, spans in rows]) == (EXT,)


def test_word_auc_and_tuned_balanced_accuracy_match_scikit_learn():
    rng = np.random.default_rng(3)
    labels = rng.random(400) < 0.3
    scores = np.round(labels * 0.4 + rng.random(400), 2)  # rounded: ties occur
    clusters = np.repeat(np.arange(40), 10)
    assert token_auc(labels, scores) == pytest.approx(roc_auc_score(labels, scores))
    cell = detection_cell(labels, scores, clusters, n_resamples=300)
    assert cell["auc"] == pytest.approx(roc_auc_score(labels, scores))
    assert cell["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(labels, scores >= cell["threshold"]))
    # No other threshold does better on these words.
    best = max(balanced_accuracy_score(labels, scores >= t) for t in np.unique(scores))
    assert cell["balanced_accuracy"] == pytest.approx(best)
    low, high = cell["auc_ci"]
    assert low < cell["auc"] < high
    low, high = cell["balanced_accuracy_ci"]
    assert low < cell["balanced_accuracy"] < high
    assert (cell["n_error_words"], cell["n_correct_words"], cell["n_summaries"]) == (int(labels.sum()), int((~labels).sum()), 40)


def test_the_report_leaves_other_types_words_and_unscored_words_out():
    words = pd.DataFrame({"summary_id": [1, 1, 1, 1, 2, 2, 2, 2]})
    for t in UNIFIED_TYPES:
        words[t] = False
    words.loc[[0, 4], EXT] = True
    words.loc[[1], PRED] = True
    words["detector"] = [0.9, 0.95, 0.1, np.nan, 0.8, 0.3, 0.2, 0.1]
    report = token_detection_report(words, ["detector"], n_resamples=100)["detector"]
    ext = report[EXT]
    # Positives: words 0 and 4; negatives: words 2, 5, 6, 7 (word 1 is a predicate error, word 3 unscored).
    assert (ext["n_error_words"], ext["n_correct_words"]) == (2, 4)
    assert ext["auc"] == pytest.approx(roc_auc_score([1, 1, 0, 0, 0, 0], [0.9, 0.8, 0.1, 0.3, 0.2, 0.1]))
    assert report[ANY_ERROR]["n_error_words"] == 3
    assert report[INT]["auc"] is None and report[INT]["n_error_words"] == 0


def test_label_models_aggregate_word_labels_with_posteriors_and_follow_a_clear_majority():
    rows = []
    for summary in range(1, 7):
        rows += [(summary, 7, 5, [(1, 3, EXT)]), (summary, 8, 5, [(1, 3, EXT)]), (summary, 9, 5, [(0, 5, PRED)])]
    fitted = S.token_label_models(_answers(rows))
    for method in ("dawid_skene", "glad"):
        result = fitted[method]
        assert result["labels"] == {EXT: 12, "none": 18}
        assert result["agrees_with_majority"] == 1.0 and 0.5 < result["mean_posterior"] <= 1.0
        # The annotator who marks every word as a predicate error is the least reliable.
        assert min(result["reliability"], key=result["reliability"].get) == "9"
