"""Minimal-pair consistency / ROC AUC and AggreFact balanced accuracy, by hand and against scikit-learn."""
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from metrics_service.stats import (
    balanced_accuracy_report,
    best_threshold,
    pair_statistics,
    paired_permutation_test,
)


def pairs_and_scores():
    pairs = pd.DataFrame(
        [(1, 11, "intrinsic_entity"), (2, 12, "extrinsic_entity"), (1, 13, "extrinsic_entity")],
        columns=["reference_id", "edited_id", "error_type"],
    )
    scores = pd.DataFrame({"m": [0.9, 0.5, 0.4, 0.6, 0.2], "n": [0.1, 0.2, 0.3, np.nan, 0.05]}, index=[1, 2, 11, 12, 13])
    return pairs, scores


def test_consistency_and_auc_by_hand():
    pairs, scores = pairs_and_scores()
    result = pair_statistics(pairs, scores, ["m", "n"], n_resamples=200)
    m = result["metrics"]["m"]
    assert m["consistency"] == pytest.approx(2 / 3)  # 0.9>0.4, 0.5<0.6, 0.9>0.2
    # BUMP: each pair's reference is a positive {0.9, 0.5, 0.9}, negatives {0.4, 0.6, 0.2}: 8 of 9 orderings
    assert m["roc_auc"] == pytest.approx(8 / 9)
    assert m["roc_auc"] == pytest.approx(roc_auc_score([1, 1, 1, 0, 0, 0], [0.9, 0.5, 0.9, 0.4, 0.6, 0.2]))
    # Option: each reference once, positives {0.9, 0.5}: 5 of 6
    once = pair_statistics(pairs, scores, ["m"], n_resamples=200, auc_references="once")["metrics"]["m"]
    assert once["roc_auc"] == pytest.approx(5 / 6) and once["consistency"] == m["consistency"]
    assert m["by_error_type"]["extrinsic_entity"]["consistency"] == pytest.approx(0.5)
    assert m["by_kind"]["intrinsic"]["consistency"] == 1.0
    n = result["metrics"]["n"]
    assert n["n_pairs"] == 2 and n["n_missing"] == 1 and n["consistency"] == pytest.approx(0.5)
    sig = result["significance"]["all"]["consistency"]
    assert sig["best"] == "m" and sig["second"] == "n" and 0 < sig["p_value"] <= 1


def test_paired_permutation_detects_a_clear_difference():
    a = np.ones(40)
    b = np.r_[np.zeros(30), np.ones(10)]
    assert paired_permutation_test(a, b, n_resamples=2000) < 0.001
    assert paired_permutation_test(a, a) == 1.0


def test_threshold_tuned_on_valid_applied_to_test():
    assert best_threshold([0.1, 0.2, 0.8, 0.9], [False, False, True, True]) == pytest.approx(0.8)
    assert best_threshold([0.1, 0.2], [True, True]) is None
    frame = pd.DataFrame({
        "split": ["valid"] * 4 + ["test"] * 4,
        "dataset": ["cnndm"] * 8,
        "system": ["bart", "pgn"] * 4,
        "label": [False, False, True, True, False, False, True, True],
        "m": [0.1, 0.2, 0.8, 0.9, 0.85, 0.3, 0.9, 0.7],
    })
    # the platform's own procedure (every score a candidate, ">="); AggreFact's is tested in test_stats_aggrefact_procedure
    result = balanced_accuracy_report(frame, ["m"], n_resamples=200, procedure="platform")["m"]
    pred = np.array([0.85, 0.3, 0.9, 0.7]) >= 0.8
    expected = balanced_accuracy_score([False, False, True, True], pred)
    assert expected == 0.5
    assert result["per_dataset"]["cnndm"]["balanced_accuracy"] == pytest.approx(expected)
    assert result["single_threshold"]["all"]["balanced_accuracy"] == pytest.approx(expected)
    assert set(result["per_dataset"]["cnndm"]["by_system_category"]) == {"SOTA", "OLD"}
    assert balanced_accuracy_report(frame[frame["split"] == "test"], ["m"]) is None
