"""Agreement statistics against hand-computed values and against statsmodels / scikit-learn."""
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from metrics_service.stats import (
    category_agreement,
    expert_agreement,
    factual_agreement,
    set_label,
)


def judgements(rows):
    return pd.DataFrame(rows, columns=["summary_id", "sentence_index", "worker_id", "factual", "categories"])


# Four sentences x three raters: factual votes 3, 2, 0, 1.
VOTES = [[True, True, True], [True, True, False], [False, False, False], [True, False, False]]


def binary_table():
    rows = []
    for unit, votes in enumerate(VOTES):
        for worker, vote in enumerate(votes):
            rows.append((1, unit, worker, vote, [] if vote else ["EntE"]))
    return judgements(rows)


def test_factual_agreement_matches_hand_computation_and_statsmodels():
    result = factual_agreement(binary_table())
    # P_i = 1, 1/3, 1, 1/3 -> P = 2/3; p_e = 0.5^2 + 0.5^2 -> kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert result["fleiss_kappa"] == pytest.approx(1 / 3)
    counts, _ = aggregate_raters(np.array(VOTES, dtype=int))
    assert result["fleiss_kappa"] == pytest.approx(fleiss_kappa(counts))
    # Coincidences o00 = o11 = 4, o01 = o10 = 2 -> D_o = 4/12, D_e = 2*6*6/(12*11) -> alpha = 1 - (1/3)/(72/132)
    assert result["krippendorff_alpha"] == pytest.approx(1 - (1 / 3) / (72 / 132))
    assert result["majority_agreement"] == pytest.approx(10 / 12)
    assert result["n_sentences"] == 4 and result["n_sentences_kappa"] == 4


def test_units_with_a_single_rater_are_ignored_and_kappa_uses_modal_rater_count():
    table = binary_table()
    extra = judgements([(2, 0, 0, True, []), (3, 0, 0, True, []), (3, 0, 1, False, ["OutE"])])
    result = factual_agreement(pd.concat([table, extra]))
    assert result["n_sentences"] == 5  # summary 2 has one rater only
    assert result["n_sentences_kappa"] == 4  # the two-rater sentence is not in Fleiss' table
    assert factual_agreement(extra.iloc[:1]) is None


def test_set_label_is_order_free_and_canonical():
    assert set_label(["OutE", "EntE", "EntE"]) == "EntE+OutE"
    assert set_label(["Other"]) == "OtherE"
    assert set_label([]) == "none"
    with pytest.raises(ValueError, match="unknown FRANK error category"):
        set_label(["Nope"])


def test_category_agreement_on_all_wrong_sentences():
    rows = [
        (1, 0, 0, False, ["EntE"]), (1, 0, 1, False, ["EntE"]), (1, 0, 2, False, ["OutE"]),
        (1, 1, 0, False, ["OutE"]), (1, 1, 1, False, ["OutE"]), (1, 1, 2, False, ["OutE"]),
        # One annotator said factual: not an all-wrong sentence, left out.
        (1, 2, 0, True, []), (1, 2, 1, False, ["CircE"]), (1, 2, 2, False, ["CircE"]),
    ]
    result = category_agreement(judgements(rows))
    # Table [[2, 1], [0, 3]]: P = (1/3 + 1)/2, p_e = (2/6)^2 + (4/6)^2 = 5/9 -> kappa = 1/4
    assert result["fleiss_kappa"] == pytest.approx(0.25)
    assert result["majority_agreement"] == pytest.approx(5 / 6)
    assert result["n_sentences"] == 2
    # A set {EntE, OutE} is its own label: it disagrees with both {EntE} and {OutE}.
    rows2 = [(1, 0, 0, False, ["EntE", "OutE"]), (1, 0, 1, False, ["EntE"]), (1, 1, 0, False, ["OutE"]), (1, 1, 1, False, ["OutE"])]
    assert category_agreement(judgements(rows2))["majority_agreement"] == pytest.approx(3 / 4)


def test_expert_agreement_is_cohens_kappa_of_crowd_majority():
    crowd = judgements([
        (1, 0, 0, True, []), (1, 0, 1, True, []),
        (1, 1, 0, False, ["EntE"]), (1, 1, 1, False, ["EntE"]),
        (1, 2, 0, True, []), (1, 2, 1, False, ["OutE"]),  # tie counts as factual
        (1, 3, 0, False, ["OutE"]), (1, 3, 1, False, ["OutE"]),
    ])
    experts = pd.DataFrame(
        [(1, 0, "e", True), (1, 1, "e", False), (1, 2, "e", False), (1, 3, "e", False), (9, 0, "e", True)],
        columns=["summary_id", "sentence_index", "expert", "factual"],
    )
    result = expert_agreement(crowd, experts)
    # crowd T F T F vs expert T F F F: p_o = 3/4, p_e = 1/2 -> kappa = 1/2
    assert result["cohen_kappa"] == pytest.approx(0.5)
    assert result["cohen_kappa"] == pytest.approx(cohen_kappa_score([1, 0, 1, 0], [1, 0, 0, 0]))
    assert result["n"] == 4 and result["accuracy"] == pytest.approx(0.75)
