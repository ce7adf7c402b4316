"""AggreFact's lens on the statistics: unified taxonomy, system categories, Kendall, system-level correlation,
paired bootstrap of correlation differences and Holm, each checked against an independent computation."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.metrics import recall_score

from metrics_service.stats import unified_taxonomy as ut
from metrics_service.stats.correlation import correlation
from metrics_service.stats.detection import system_category
from metrics_service.stats.significance import (
    bootstrap_difference_matrix,
    holm,
    holm_matrix,
    paired_bootstrap_difference,
    system_level_correlation,
)
from taxonomies import bump as bump_taxonomy
from taxonomies import unified as types
from taxonomies.frank import CODES


def test_bottom_up_is_an_old_lstm_system():
    assert system_category("bus") == "OLD"
    assert system_category("bottomup") == "OLD"
    assert system_category("bert_sum") == "XFORMER"
    assert system_category("BART") == "SOTA"


def test_frank_categories_map_as_the_paper_states():
    expected = {
        "EntE": "extrinsic_np", "OutE": "extrinsic_np", "RelE": "extrinsic_predicate", "GramE": "extrinsic_predicate",
        "CircE": "intrinsic_np", "CorefE": "intrinsic_np", "LinkE": "intrinsic_predicate", "OtherE": "intrinsic_predicate",
    }
    assert {c: types.frank_to_unified(c) for c in CODES} == expected
    assert types.frank_to_unified("PredE") == "extrinsic_predicate"  # FRANK's paper name of RelE
    assert types.frank_to_unified("Other") == "intrinsic_predicate"  # FRANK's data-file name of OtherE
    with pytest.raises(ValueError, match="unknown FRANK error category"):
        types.frank_to_unified("NoSuchE")


def test_every_bump_type_has_a_unified_type():
    assert set(types.BUMP_TO_UNIFIED) == set(bump_taxonomy.CODES)
    assert types.bump_to_unified("Extrinsic Entity Error") == "extrinsic_np"
    assert types.bump_to_unified("Intrinsic Circumstance") == "intrinsic_np"
    assert types.bump_to_unified("extrinsic_circumstance") == "extrinsic_np"
    assert types.bump_to_unified("coreference") == "intrinsic_np"
    assert types.bump_to_unified("Intrinsic Predicate Error") == "intrinsic_predicate"
    assert types.type_counts(["intrinsic_entity", "coreference", "extrinsic_predicate"]) == {
        "intrinsic_np": 2, "intrinsic_predicate": 0, "extrinsic_np": 0, "extrinsic_predicate": 1}


def test_summary_types_entire_sentence_and_untyped():
    assert types.summary_types(["EntE"], 1.0) == ()
    assert types.summary_types([], 0.0) == ()  # inconsistent but untyped
    assert types.summary_types(["EntE", "CircE"], 0.5) == ("intrinsic_np", "extrinsic_np")
    # the paper derives no "entire sentence" from FRANK's annotations ...
    assert types.summary_types(["EntE", "RelE"], 0.0) == ("extrinsic_np", "extrinsic_predicate")
    # ... the platform's rule is an option: no factual sentence, wrong on a noun phrase and a predicate
    assert types.summary_types(["EntE", "RelE"], 0.0, entire_sentence=True) == ("entire_sentence",)
    # partly factual: the constituents are kept
    assert types.summary_types(["EntE", "RelE"], 0.5) == ("extrinsic_np", "extrinsic_predicate")
    assert types.summary_types(["EntE", "OutE"], 0.0) == ("extrinsic_np",)
    assert types.summary_types(["extrinsic_entity", "intrinsic_predicate"], 0.0, protocol="bump", entire_sentence=True) == ("entire_sentence",)


def _human_frame() -> pd.DataFrame:
    rows = [
        # system, dataset, split, Factuality, EntE, RelE, CircE, OutE
        ("bart", "cnndm", "test", 1.0, 1, 1, 1, 1),
        ("bart", "cnndm", "test", 0.5, 0.5, 1, 1, 1),      # extrinsic NP
        ("bus", "cnndm", "test", 0.0, 0, 0, 1, 1),         # entire sentence
        ("bus", "cnndm", "test", 0.5, 1, 1, 0.5, 1),       # intrinsic NP
        ("pgn", "xsum", "test", 0.0, 1, 1, 1, 1),          # untyped
        ("pgn", "xsum", "test", 0.0, 1, 0, 1, 1),          # extrinsic predicate
        ("bert_sum", "xsum", "test", 0.0, 0, 1, 0, 0),     # NPs only
        ("bert_sum", "xsum", "valid", 0.0, 0, 1, 1, 1),
    ]
    frame = pd.DataFrame(rows, columns=["system", "dataset", "split", "Factuality", "EntE", "RelE", "CircE", "OutE"])
    frame["category"] = frame["system"].map(system_category)
    return frame


def test_type_distribution_counts_by_hand():
    human = _human_frame()
    assert not ut.unified_frame(human)["entire_sentence"].any()  # the paper's default
    unified = ut.unified_frame(human, entire_sentence=True).join(human[["category", "dataset"]])
    assert unified["entire_sentence"].tolist() == [False, False, True, False, False, False, False, False]
    assert unified["typed"].tolist() == [False, True, True, True, False, True, True, True]
    by_category = ut.type_distribution(unified, "category")
    old = by_category["OLD"]  # bus x2, pgn x2: 3 typed incorrect of 4 incorrect
    assert (old["n"], old["n_incorrect"], old["n_typed"]) == (4, 4, 3)
    assert old["counts"] == {"intrinsic_np": 1, "intrinsic_predicate": 0, "extrinsic_np": 0, "extrinsic_predicate": 1, "entire_sentence": 1}
    assert old["intrinsic_np"] == pytest.approx(1 / 3)
    xformer = by_category["XFORMER"]
    assert xformer["counts"]["intrinsic_np"] == 1 and xformer["counts"]["extrinsic_np"] == 2
    by_dataset = ut.type_distribution(unified, "dataset")
    assert by_dataset["xsum"]["n_incorrect"] == 4 and by_dataset["xsum"]["n_typed"] == 3


def test_recall_by_type_matches_sklearn():
    human = _human_frame()
    unified = ut.unified_frame(human)
    metric = np.array([0.9, 0.2, 0.1, 0.8, 0.3, 0.7, 0.1, 0.4])
    frame = pd.concat([human[["dataset", "split"]], unified], axis=1).assign(m=metric)
    thresholds = {"m": {"cnndm": 0.5, "xsum": 0.5}}
    result = ut.recall_by_type(frame, ["m"], thresholds)
    for dataset in ("cnndm", "xsum"):
        sub = frame[(frame["dataset"] == dataset) & (frame["split"] == "test")]
        predicted_inconsistent = (sub["m"] < 0.5).astype(int)
        for error_type in types.UNIFIED_TYPES:
            mask = sub[error_type]
            cell = result["m"][dataset][error_type]
            assert cell["n"] == int(mask.sum())
            if mask.any():
                assert cell["recall"] == pytest.approx(recall_score(np.ones(int(mask.sum())), predicted_inconsistent[mask]))
            else:
                assert cell["recall"] is None
    assert result["m"]["xsum"]["extrinsic_predicate"]["recall"] == 0.0  # scored 0.7, above the threshold
    assert result["m"]["xsum"]["all_errors"] == {"recall": pytest.approx(2 / 3), "n": 3}


def _correlated(n: int = 120, seed: int = 3):
    rng = np.random.default_rng(seed)
    human = rng.uniform(0, 1, n)
    a = human + rng.normal(0, 0.3, n)
    b = human + rng.normal(0, 0.8, n)
    groups = [f"s{i % 4}|{'cnndm' if i % 2 else 'xsum'}" for i in range(n)]
    return human, a, b, groups


def test_kendall_plain_and_partial_against_scipy_and_statsmodels():
    human, a, _, groups = _correlated()
    plain = correlation(human, a, partial=False, kendall=True)
    reference = stats.kendalltau(human, a)
    assert plain["kendall"] == pytest.approx(reference.statistic)
    assert plain["kendall_p"] == pytest.approx(reference.pvalue)
    partial = correlation(human, a, groups, kendall=True)
    design = sm.add_constant(pd.get_dummies(pd.Series(groups), drop_first=True, dtype=float).to_numpy())
    residual_h = sm.OLS(human, design).fit().resid
    residual_a = sm.OLS(a, design).fit().resid
    expected = stats.kendalltau(residual_h, residual_a)
    assert partial["kendall"] == pytest.approx(expected.statistic, abs=1e-9)
    assert partial["kendall_p"] == pytest.approx(expected.pvalue, rel=1e-6)
    assert "kendall" not in correlation(human, a, groups)  # an option, off by default


def test_system_level_correlation_against_scipy():
    rng = np.random.default_rng(0)
    systems = [f"sys{i}" for i in range(6)]
    rows = []
    for k, system in enumerate(systems):
        for _ in range(10):
            h = rng.uniform(0, 1) * 0.3 + k * 0.1
            rows.append((system, "cnndm", h, h * 2 + rng.normal(0, 0.3)))
    frame = pd.DataFrame(rows, columns=["system", "dataset", "Factuality", "m"])
    frame.loc[3, "m"] = np.nan
    result = system_level_correlation(frame, "Factuality", ["m"])["m"]
    means = frame.dropna().groupby("system")[["Factuality", "m"]].mean()
    assert result["n"] == 6
    assert result["pearson"] == pytest.approx(stats.pearsonr(means["Factuality"], means["m"]).statistic)
    assert result["spearman"] == pytest.approx(stats.spearmanr(means["Factuality"], means["m"]).statistic)
    tau = stats.kendalltau(means["Factuality"], means["m"])
    assert result["kendall"] == pytest.approx(tau.statistic) and result["kendall_p"] == pytest.approx(tau.pvalue)


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_paired_bootstrap_difference_against_a_loop(method):
    human, a, b, _ = _correlated(n=60)
    result = paired_bootstrap_difference(human, a, b, method=method, n_resamples=300, seed=7)
    correlate = stats.pearsonr if method == "pearson" else stats.spearmanr
    assert result["difference"] == pytest.approx(correlate(human, a).statistic - correlate(human, b).statistic)
    # Independent: the same multinomial draws, each resample recomputed by scipy on the drawn rows. For
    # Spearman the full-sample ranks are resampled (documented), so ranks are taken once here too.
    x, y, z = (human, a, b) if method == "pearson" else (stats.rankdata(human), stats.rankdata(a), stats.rankdata(b))
    drawn = np.random.default_rng(7).integers(0, len(human), size=(300, len(human)))
    differences = [stats.pearsonr(x[i], y[i]).statistic - stats.pearsonr(x[i], z[i]).statistic for i in drawn]
    low, high = np.percentile(differences, [2.5, 97.5])
    assert result["ci"] == pytest.approx([low, high], abs=1e-9)
    assert result["ci"][0] > 0  # A (less noise) correlates better
    assert result["n"] == 60


def test_partial_bootstrap_difference_uses_residuals():
    human, a, b, groups = _correlated(n=80)
    result = paired_bootstrap_difference(human, a, b, groups, n_resamples=200)
    full_a = correlation(human, a, groups)["pearson"]
    full_b = correlation(human, b, groups)["pearson"]
    assert result["difference"] == pytest.approx(full_a - full_b)
    rng = np.random.default_rng(5)
    c = human + rng.normal(0, 0.5, len(human))
    frame = pd.DataFrame({"Factuality": human, "a": a, "b": b, "c": c, "group": groups})
    # All metrics complete: the one-product path; each pair must equal the pairwise computation.
    matrix = bootstrap_difference_matrix(frame, "Factuality", ["a", "b", "c"], n_resamples=200)
    for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
        pairwise = paired_bootstrap_difference(human, frame[x], frame[y], groups, n_resamples=200)
        assert matrix[x][y]["difference"] == pytest.approx(pairwise["difference"], abs=1e-12)
        assert matrix[x][y]["ci"] == pytest.approx(pairwise["ci"], abs=1e-9)
        assert matrix[y][x]["difference"] == pytest.approx(-pairwise["difference"])
        assert matrix[y][x]["ci"] == pytest.approx([-pairwise["ci"][1], -pairwise["ci"][0]])
    # A metric with a gap: its pairs use their own complete rows.
    frame.loc[3, "c"] = np.nan
    gapped = bootstrap_difference_matrix(frame, "Factuality", ["a", "b", "c"], n_resamples=200)
    assert gapped["a"]["c"]["n"] == len(human) - 1 and gapped["a"]["b"]["n"] == len(human)
    assert gapped["a"]["c"] == paired_bootstrap_difference(human, frame["a"], frame["c"], groups, n_resamples=200)


def test_bootstrap_difference_needs_rows():
    assert paired_bootstrap_difference([1, 2, 3], [1, 2, 3], [3, 2, 1])["ci"] is None
    with pytest.raises(ValueError, match="unknown method"):
        paired_bootstrap_difference([1] * 20, [1] * 20, [1] * 20, method="kendall")


def test_holm_against_the_step_down_formula():
    pvalues = [0.01, 0.04, None, 0.03, 0.005]
    present = np.array([0.01, 0.04, 0.03, 0.005])
    order = np.argsort(present)
    m = len(present)
    stepped = np.maximum.accumulate(np.minimum(1, (m - np.arange(m)) * present[order]))
    expected = np.empty(m)
    expected[order] = stepped
    adjusted = holm(pvalues)
    assert adjusted[2] is None
    assert [adjusted[i] for i in (0, 1, 3, 4)] == pytest.approx(expected.tolist())
    assert adjusted == pytest.approx([0.03, 0.06, None, 0.06, 0.02])
    matrix = holm_matrix({"A": {"B": 0.01}, "B": {"A": 0.99}})
    assert matrix == {"A": {"B": pytest.approx(0.02)}, "B": {"A": pytest.approx(0.99)}}
