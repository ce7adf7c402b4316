"""The papers' definitions (FRANK partial Spearman, BUMP per-pair AUC) and the vectorised intervals,
each checked against an independent computation (statsmodels OLS, scipy, scikit-learn, explicit resamples)."""
import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.metrics import roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from metrics_service.stats.correlation import correlation, demean, group_codes, partial_residuals
from metrics_service.stats.resampling import (
    bootstrap_counts,
    weighted_auc,
    weighted_pearson,
    weighted_ranks,
    wilson_interval,
)


def grouped_data(n=300, seed=3):
    rng = np.random.default_rng(seed)
    groups = rng.choice(["bart|cnndm", "pgn|cnndm", "BERTS2S|xsum", "PtGen|xsum"], n)
    offset = {"bart|cnndm": 0.8, "pgn|cnndm": 0.2, "BERTS2S|xsum": -0.5, "PtGen|xsum": -1.0}
    base = np.array([offset[g] for g in groups])
    human = np.clip(base + rng.normal(size=n), -2, 2).round(1)  # ties, like FRANK's factuality
    metric = 2 * base + 0.3 * human + rng.exponential(size=n)  # skewed, so ranks and values differ
    return human, metric, groups


def ols_residuals(y, groups):
    dummies = np.column_stack([(groups == g).astype(float) for g in sorted(set(groups))[1:]])
    return sm.OLS(y, sm.add_constant(dummies)).fit().resid


def test_group_demeaning_equals_least_squares_residuals():
    human, metric, groups = grouped_data()
    values = np.column_stack([human, metric])
    assert np.allclose(demean(values, group_codes(groups)), partial_residuals(values, groups))


def test_partial_spearman_default_is_frank_residuals_of_raw_values():
    human, metric, groups = grouped_data()
    result = correlation(human, metric, groups.tolist())
    expected = stats.spearmanr(ols_residuals(human, groups), ols_residuals(metric, groups)).statistic
    assert result["spearman_definition"] == "residuals"
    assert result["spearman"] == pytest.approx(expected, abs=1e-12)
    assert result["pearson"] == pytest.approx(stats.pearsonr(ols_residuals(human, groups), ols_residuals(metric, groups)).statistic)
    # The option: rank first, then residualise (the platform's former definition) - a different number.
    ranks = correlation(human, metric, groups.tolist(), spearman="ranks")
    expected_ranks = np.corrcoef(ols_residuals(stats.rankdata(human), groups), ols_residuals(stats.rankdata(metric), groups))[0, 1]
    assert ranks["spearman_definition"] == "ranks" and ranks["spearman"] == pytest.approx(expected_ranks)
    assert abs(ranks["spearman"] - result["spearman"]) > 1e-3
    with pytest.raises(ValueError, match="unknown Spearman definition"):
        correlation(human, metric, groups.tolist(), spearman="kendall")


def test_correlation_intervals_fisher_and_bootstrap():
    human, metric, groups = grouped_data()
    result = correlation(human, metric, groups.tolist(), intervals=True)
    n, q = len(human), 3  # four groups: three dummies partialled out
    z, se = np.arctanh(result["pearson"]), 1 / np.sqrt(n - 3 - q)
    assert result["pearson_ci"] == pytest.approx([np.tanh(z - 1.959964 * se), np.tanh(z + 1.959964 * se)], abs=1e-6)
    z, se = np.arctanh(result["spearman"]), np.sqrt(1.06 / (n - 3 - q))  # Fieller, Hartley & Pearson
    assert result["spearman_ci"] == pytest.approx([np.tanh(z - 1.959964 * se), np.tanh(z + 1.959964 * se)], abs=1e-6)
    for key in ("pearson", "spearman"):
        low, high = result[f"{key}_ci_bootstrap"]
        assert low < result[key] < high and high - low < 0.4
    again = correlation(human, metric, groups.tolist(), intervals=True)
    assert again == result  # fixed seed


def test_weighted_bootstrap_equals_explicit_resamples():
    rng = np.random.default_rng(5)
    x = rng.normal(size=40).round(1)
    y = (x + rng.normal(size=40)).round(1)
    counts = bootstrap_counts(40, 6, seed=9)
    pearson = weighted_pearson(x, y, counts)
    spearman = weighted_pearson(weighted_ranks(x, counts), weighted_ranks(y, counts), counts)
    for b in range(6):
        idx = np.repeat(np.arange(40), counts[b].astype(int))
        assert pearson[b] == pytest.approx(np.corrcoef(x[idx], y[idx])[0, 1])
        assert spearman[b] == pytest.approx(stats.spearmanr(x[idx], y[idx]).statistic)
    pos, neg = x[:20], y[20:]
    auc = weighted_auc(pos, neg, counts[:, :20], counts[:, 20:])
    for b in range(6):
        p_idx = np.repeat(np.arange(20), counts[b, :20].astype(int))
        n_idx = np.repeat(np.arange(20), counts[b, 20:].astype(int))
        truth = np.r_[np.ones(len(p_idx)), np.zeros(len(n_idx))]
        assert auc[b] == pytest.approx(roc_auc_score(truth, np.r_[pos[p_idx], neg[n_idx]]))


def test_wilson_interval_matches_statsmodels():
    assert wilson_interval(37, 50) == pytest.approx(proportion_confint(37, 50, method="wilson"))
    assert wilson_interval(0, 0) == (None, None)
