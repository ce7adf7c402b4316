"""Partial correlations and Williams' test against hand formulas and statsmodels OLS."""
import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from metrics_service.stats import williams_test
from metrics_service.stats.correlation import correlation, williams_matrix


def data(n=200, seed=1):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2, n)
    human = z * 0.8 + rng.normal(size=n)
    metric = z * 1.5 + 0.4 * human + rng.normal(size=n)
    return human, metric, z


def test_partial_pearson_matches_first_order_formula_and_ols_t_test():
    human, metric, z = data()
    result = correlation(human, metric, z.tolist(), partial=True)
    r = np.corrcoef([human, metric, z])
    rxy, rxz, ryz = r[0, 1], r[0, 2], r[1, 2]
    expected = (rxy - rxz * ryz) / np.sqrt((1 - rxz**2) * (1 - ryz**2))
    assert result["pearson"] == pytest.approx(expected)
    # The t test of human's coefficient in metric ~ human + z is the partial-correlation convention (df n - 3) ...
    fit = sm.OLS(metric, sm.add_constant(np.column_stack([human, z]))).fit()
    assert correlation(human, metric, z.tolist(), dof="partial")["pearson_p"] == pytest.approx(fit.pvalues[1], rel=1e-6)
    assert result["partial"] is True and result["n"] == len(human) and result["dof"] == "frank"


def test_partial_p_values_by_default_are_franks_scipy_on_the_residuals():
    # FRANK's script: scipy's pearsonr and spearmanr of the group-demeaned values (n - 2 degrees of freedom).
    human, metric, z = data()
    result = correlation(human, metric, z.tolist(), partial=True)
    residual = lambda v: v - np.array([v[z == g].mean() for g in z])
    assert result["pearson_p"] == pytest.approx(stats.pearsonr(residual(human), residual(metric)).pvalue, rel=1e-9)
    assert result["spearman_p"] == pytest.approx(stats.spearmanr(residual(human), residual(metric)).pvalue, rel=1e-9)
    other = correlation(human, metric, z.tolist(), partial=True, dof="partial")
    assert other["spearman_p"] != pytest.approx(result["spearman_p"], rel=1e-9)
    with pytest.raises(ValueError, match="dof: 'n' is not one of frank, partial"):
        correlation(human, metric, z.tolist(), dof="n")


def test_plain_correlation_equals_scipy_and_skips_missing():
    human, metric, z = data(60)
    metric[3] = np.nan
    result = correlation(human, metric, z.tolist(), partial=False)
    keep = ~np.isnan(metric)
    assert result["n"] == 59 and result["partial"] is False
    assert result["pearson"] == pytest.approx(stats.pearsonr(human[keep], metric[keep]).statistic)
    assert result["spearman_p"] == pytest.approx(stats.spearmanr(human[keep], metric[keep]).pvalue)


def test_partial_spearman_removes_group_offsets():
    # Within each group the metric is a monotone function of human; groups are shifted apart.
    human = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    metric = np.array([5, 6, 7, 8, 1, 2, 3, 4], dtype=float)
    groups = ["x"] * 4 + ["y"] * 4
    assert correlation(human, metric, groups, partial=False)["spearman"] < 0
    assert correlation(human, metric, groups, partial=True)["spearman"] > 0.9


def test_williams_against_hand_computed_value():
    # K = 1 - .25 - .09 - .16 + 2(.5)(.3)(.4) = 0.62
    # t = 0.2 * sqrt(49 * 1.4) / sqrt(2 * 0.62 * 49/47 + (0.8**2 / 4) * 0.6**3) = 1.656502 / 1.152097
    t, p = williams_test(0.5, 0.3, 0.4, 50)
    assert t == pytest.approx(1.43782, abs=1e-4)
    assert p == pytest.approx(stats.t.sf(1.43782, 47), abs=1e-5)
    t_rev, p_rev = williams_test(0.3, 0.5, 0.4, 50)
    assert t_rev == pytest.approx(-t) and p + p_rev == pytest.approx(1.0)
    with pytest.raises(ValueError, match="more than 3"):
        williams_test(0.5, 0.3, 0.4, 3)


def test_williams_matrix_prefers_the_better_metric():
    import pandas as pd

    rng = np.random.default_rng(0)
    human = rng.normal(size=300)
    frame = pd.DataFrame({
        "Factuality": human, "good": human + rng.normal(scale=0.5, size=300),
        "bad": human + rng.normal(scale=3, size=300), "group": ["g"] * 300,
    })
    matrix = williams_matrix(frame, "Factuality", ["good", "bad"], partial=False)
    assert matrix["good"]["bad"] < 0.001 and matrix["bad"]["good"] > 0.999


def test_a_bootstrap_p_value_no_resample_reaches_reads_below_its_resolution():
    import pandas as pd

    from metrics_service.stats.minimal_pairs import pair_statistics

    # metric "a" always ranks the reference above its edit, "b" never: no bootstrap resample crosses zero
    pairs = pd.DataFrame({"reference_id": range(1, 41), "edited_id": range(101, 141), "error_type": "extrinsic_entity"})
    scores = pd.DataFrame({"a": [1.0] * 40 + [0.0] * 40, "b": [0.0] * 40 + [1.0] * 40}, index=list(range(1, 41)) + list(range(101, 141)))
    result = pair_statistics(pairs, scores, ["a", "b"], n_resamples=2000)
    test = result["significance"]["all"]["roc_auc"]
    assert test["p_value_bound"] == "below" and test["p_value_text"] == "< 1/200" and test["p_value"] == pytest.approx(1 / 200)
