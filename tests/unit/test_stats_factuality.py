"""Per-summary human factuality, category flips and the category confusion matrix, by hand."""
import pandas as pd
import pytest

from metrics_service.stats import (
    category_confusion,
    error_distribution,
    flip_scores,
    sentence_majority,
    summary_human_scores,
)

ROWS = [
    (1, 0, "a", False, ["EntE"]), (1, 0, "b", False, ["EntE", "OutE"]), (1, 0, "c", True, []),
    (1, 1, "a", True, []), (1, 1, "b", True, []), (1, 1, "c", False, ["OutE"]),
]


def frame():
    return pd.DataFrame(ROWS, columns=["summary_id", "sentence_index", "worker_id", "factual", "categories"])


def test_majority_and_modal_category():
    units = sentence_majority(frame()).set_index("sentence_index")
    assert not units.loc[0, "factual"] and units.loc[0, "categories"] == ("EntE",)
    assert units.loc[1, "factual"] and units.loc[1, "categories"] == ()


def test_summary_scores_and_flips():
    scores = summary_human_scores(frame()).loc[1]
    assert scores["Factuality"] == pytest.approx(0.5)
    assert scores["EntE"] == pytest.approx(0.5) and scores["OutE"] == pytest.approx(1.0)
    assert scores["Semantic_Frame_Errors"] == pytest.approx(0.5)
    # Flipping EntE: worker a becomes factual (2 of 3) -> both sentences factual.
    assert scores["Flip_EntE"] == pytest.approx(1.0)
    # Flipping OutE: worker b still has EntE -> sentence 0 stays wrong.
    assert scores["Flip_OutE"] == pytest.approx(0.5)
    assert scores["Flip_Semantic_Frame_Errors"] == pytest.approx(1.0)
    assert flip_scores(frame(), ["RelE"]).loc[1] == pytest.approx(0.5)


def test_confusion_rows_are_majority_category():
    confusion = category_confusion(frame())
    row = confusion["matrix"][confusion["labels"].index("EntE")]
    columns = confusion["columns"]
    assert row[columns.index("EntE")] == 2 and row[columns.index("OutE")] == 1 and row[columns.index("NoE")] == 1
    assert sum(map(sum, confusion["matrix"])) == 4 and confusion["n_sentences"] == 1


def test_error_distribution_shares():
    summaries = pd.DataFrame(
        {"system": ["a", "a", "b"], "Factuality": [1.0, 0.5, 0.0], "EntE": [1.0, 0.5, 1.0], "OutE": [1.0, 1.0, 0.0]}
    )
    dist = error_distribution(summaries, codes=["EntE", "OutE"])
    assert dist["a"] == {"incorrect": 0.5, "EntE": 0.5, "OutE": 0.0, "n": 2}
    assert dist["b"]["incorrect"] == 1.0 and dist["b"]["OutE"] == 1.0
