"""Metric-human correlations, partial on the confounder system x dataset (FRANK section 6, appendix).

FRANK shows that system and dataset drive both metric values and human factuality, so plain correlations
over a pooled benchmark mostly rank systems. A partial correlation removes that: both variables are
regressed on the one-hot coding of the confounder plus an intercept, and the residuals are correlated.
That regression's fitted values are the group means, so the residuals are computed by *group demeaning*
(one ``bincount`` per column), which equals the least-squares fit exactly and costs O(n).

* **Pearson** (partial): Pearson of the residuals.
* **Kendall** (optional, ``kendall=True``): scipy's tau-b with its two-sided p-value; partial Kendall is
  tau-b of the residuals (as FRANK's partial Spearman), its p-value scipy's for those residual pairs.
* **Spearman** (partial), two definitions:

  - ``"residuals"`` (default, FRANK's released ``evaluate.py``): Spearman of the residuals of the *raw*
    values;
  - ``"ranks"``: the values are ranked first, the ranks are demeaned per group, and Pearson of those
    residuals is taken (the classical partial rank correlation).

p-values of partial correlations, Pearson and Spearman alike, use by default FRANK's convention: the t
statistic of the residuals' correlation with ``n - 2`` degrees of freedom, as FRANK's released script gets from
scipy's ``pearsonr`` and ``spearmanr`` of the residuals (``dof="frank"``). The partial-correlation convention,
``n - 2 - (k - 1)`` for ``k`` confounder levels (the residuals lost ``k - 1`` further degrees of freedom; the
ordinary least-squares t test of the human coefficient), is the named option ``dof="partial"``. At FRANK's size
the two differ only in the third significant digit.

Confidence intervals (95%):

* **Fisher z**: ``tanh(atanh(r) +- 1.96 * se)`` with ``se = 1 / sqrt(n - 3 - q)`` for Pearson and
  ``sqrt(1.06 / (n - 3 - q))`` for Spearman (Fieller, Hartley & Pearson 1957), ``q = k - 1``
  controlled dummies (0 for plain correlations);
* **bootstrap**: percentile interval over resamples of the rows (the residual pairs of the full sample for
  partial correlations; for Spearman the pairs of their full-sample ranks), 1000 resamples with a fixed
  seed, computed as weighted statistics (no loop).

Williams' test (Williams 1959; Steiger 1980, eq. 7) compares two *dependent* correlations sharing the
human variable: ``r12 = corr(human, A)``, ``r13 = corr(human, B)``, ``r23 = corr(A, B)``::

    K = 1 - r12² - r13² - r23² + 2·r12·r13·r23
    t = (r12 - r13)·sqrt((n - 1)(1 + r23)) / sqrt(2K(n - 1)/(n - 3) + ((r12 + r13)²/4)(1 - r23)³)

with ``n - 3`` degrees of freedom; the p-value is one-sided: small when A correlates more with humans.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ._util import clean_float
from .resampling import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_counts,
    percentile_interval,
    weighted_pearson,
)

TOLERANCE = 1e-10
RESIDUAL_DIGITS = 12
SPEARMAN_DEFINITIONS = ("residuals", "ranks")
DOF_CONVENTIONS = ("frank", "partial")
EMPTY = {"pearson": None, "pearson_p": None, "spearman": None, "spearman_p": None}
Z_95 = 1.959963984540054


def group_codes(groups: Sequence) -> np.ndarray:
    """Integer code per row of the confounder labels.

    Examples
    --------
    >>> group_codes(["pgn|xsum", "bart|cnndm", "pgn|xsum"]).tolist()
    [1, 0, 1]
    """
    codes, _ = pd.factorize(pd.Series(list(groups), dtype="object"), sort=True)
    return codes


def demean(values: np.ndarray, codes: np.ndarray | None) -> np.ndarray:
    """Residuals of each column of ``values`` (n or n x p) after OLS on one-hot groups plus an intercept.

    The fitted values of that regression are the group means, so this subtracts them (exactly the
    least-squares residuals, see ``partial_residuals``, without a fit).

    Examples
    --------
    >>> demean(np.array([1.0, 3.0, 10.0, 14.0]), np.array([0, 0, 1, 1])).tolist()
    [-1.0, 1.0, -2.0, 2.0]
    """
    values = np.asarray(values, dtype=float)
    flat = values.ndim == 1
    matrix = values[:, None] if flat else values
    if codes is None:
        out = matrix - matrix.mean(axis=0)
    else:
        sizes = np.bincount(codes)
        means = np.column_stack([np.bincount(codes, weights=matrix[:, j]) / np.maximum(sizes, 1) for j in range(matrix.shape[1])])
        out = matrix - means[codes]
    return out[:, 0] if flat else out


def partial_residuals(values: np.ndarray, groups: Sequence | None) -> np.ndarray:
    """Residuals of each column of ``values`` (n x p) after OLS on one-hot ``groups`` plus an intercept.

    The reference implementation (numpy ``lstsq``); ``demean`` gives the same residuals in O(n).

    Examples
    --------
    >>> partial_residuals(np.array([1.0, 3.0, 10.0, 14.0]), ["a", "a", "b", "b"]).ravel().round(9).tolist()
    [-1.0, 1.0, -2.0, 2.0]
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    design = np.ones((values.shape[0], 1))
    if groups is not None:
        dummies = pd.get_dummies(pd.Series(list(groups), dtype="object"), drop_first=True, dtype=float).to_numpy()
        design = np.hstack([design, dummies])
    coef, *_ = np.linalg.lstsq(design, values, rcond=None)
    return values - design @ coef


def _pearson_with_df(x: np.ndarray, y: np.ndarray, df: int) -> tuple[float | None, float | None]:
    # Residuals of a variable the confounder explains fully are float noise, not variation.
    if df < 1 or np.std(x) < TOLERANCE or np.std(y) < TOLERANCE:
        return None, None
    r = float(np.corrcoef(x, y)[0, 1])
    r = max(-1.0, min(1.0, r))
    if abs(r) == 1.0:
        return r, 0.0
    t = r * np.sqrt(df / (1 - r * r))
    return r, float(2 * stats.t.sf(abs(t), df))


def fisher_interval(r: float | None, n: int, controlled: int = 0, *, spearman: bool = False) -> tuple[float | None, float | None]:
    """95% Fisher z interval of a (partial) correlation; ``controlled`` = number of dummies partialled out.

    Examples
    --------
    >>> low, high = fisher_interval(0.5, n=28)  # se = 1 / sqrt(25)
    >>> round(low, 3), round(high, 3)
    (0.156, 0.736)
    """
    dof = n - 3 - controlled
    if r is None or dof < 1 or abs(r) >= 1:
        return None, None
    se = np.sqrt((1.06 if spearman else 1.0) / dof)
    z = np.arctanh(r)
    return float(np.tanh(z - Z_95 * se)), float(np.tanh(z + Z_95 * se))


def correlation(
    human: Sequence[float],
    metric: Sequence[float],
    groups: Sequence | None = None,
    *,
    partial: bool = True,
    spearman: str = "residuals",
    intervals: bool = False,
    with_spearman: bool = True,
    kendall: bool = False,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    dof: str = "frank",
) -> dict:
    """Pearson and Spearman correlation (with two-sided p-values) of ``metric`` with ``human``.

    Rows where either value is missing are skipped. With ``partial`` and ``groups`` (one confounder label
    per row, e.g. ``"bart|cnndm"``), both are partial correlations controlling for the groups, Spearman by
    the ``spearman`` definition (``"residuals"``, FRANK's, or ``"ranks"``; see the module doc).
    Returns ``{"pearson", "pearson_p", "spearman", "spearman_p", "n", "partial", "spearman_definition"}``
    (``None`` values when fewer than 3 rows or a constant variable); with ``intervals`` also
    ``"pearson_ci"``, ``"spearman_ci"`` (Fisher z) and ``"pearson_ci_bootstrap"``,
    ``"spearman_ci_bootstrap"`` (percentile bootstrap), each ``[low, high]`` or ``None``; with ``kendall``
    also ``"kendall"`` and ``"kendall_p"`` (tau-b, of the residuals when partial). ``dof`` chooses the degrees of
    freedom of partial p-values (``"frank"``: ``n - 2``; ``"partial"``: ``n - 2 - (k - 1)``; see the module doc).

    Examples
    --------
    >>> result = correlation([1, 2, 3, 4], [1, 3, 2, 4], partial=False)
    >>> round(result["pearson"], 6), round(result["spearman"], 6), result["n"]
    (0.8, 0.8, 4)

    Pooled over two systems the metric looks wrong; within each system it ranks the summaries as humans do:

    >>> human, metric = [0.2, 0.4, 0.8, 1.0], [0.5, 0.6, 0.1, 0.2]
    >>> groups = ["pgn|xsum", "pgn|xsum", "bart|cnndm", "bart|cnndm"]
    >>> round(correlation(human, metric, partial=False)["pearson"], 2), round(correlation(human, metric, groups)["pearson"], 6)
    (-0.84, 1.0)
    """
    if spearman not in SPEARMAN_DEFINITIONS:
        raise ValueError(f"unknown Spearman definition {spearman!r}; expected one of {', '.join(SPEARMAN_DEFINITIONS)}")
    if dof not in DOF_CONVENTIONS:
        raise ValueError(f"dof: {dof!r} is not one of {', '.join(DOF_CONVENTIONS)}")
    x = np.asarray(human, dtype=float)
    y = np.asarray(metric, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    labels = None if groups is None or not partial else np.asarray(list(groups), dtype=object)[keep]
    n = len(x)
    is_partial = bool(partial and labels is not None)
    out = {**EMPTY, "n": n, "partial": is_partial, "spearman_definition": spearman if is_partial else None,
           "dof": dof if is_partial else None}
    if intervals:
        out.update(pearson_ci=None, spearman_ci=None, pearson_ci_bootstrap=None, spearman_ci_bootstrap=None)
    if kendall:
        out.update(kendall=None, kendall_p=None)
    if n < 3:
        return out
    if not is_partial:
        if np.std(x) == 0 or np.std(y) == 0:
            return out
        pearson = stats.pearsonr(x, y)
        rho = stats.spearmanr(x, y)
        out.update(
            pearson=clean_float(pearson.statistic), pearson_p=clean_float(pearson.pvalue),
            spearman=clean_float(rho.statistic), spearman_p=clean_float(rho.pvalue),
        )
        residual_x, residual_y, controlled = x, y, 0
    else:
        codes = group_codes(labels)
        controlled = int(codes.max()) if n else 0
        df = n - 2 if dof == "frank" else n - 2 - controlled
        # Rounded so that residuals equal in exact arithmetic (e.g. 1.0 - 0.8 and 0.8 - 0.6 in two groups) tie
        # in the ranks, instead of float noise deciding their order.
        residuals = demean(np.column_stack([x, y]), codes).round(RESIDUAL_DIGITS)
        residual_x, residual_y = residuals[:, 0], residuals[:, 1]
        if not with_spearman:
            rank_x = rank_y = np.zeros(n)
        elif spearman == "residuals":
            rank_x, rank_y = stats.rankdata(residual_x), stats.rankdata(residual_y)
            if np.std(residual_x) < TOLERANCE or np.std(residual_y) < TOLERANCE:
                rank_x = rank_y = np.zeros(n)
        else:
            ranked = demean(np.column_stack([stats.rankdata(x), stats.rankdata(y)]), codes)
            rank_x, rank_y = ranked[:, 0], ranked[:, 1]
        r_p, p_p = _pearson_with_df(residual_x, residual_y, df)
        r_s, p_s = _pearson_with_df(rank_x, rank_y, df)
        out.update(pearson=clean_float(r_p), pearson_p=clean_float(p_p), spearman=clean_float(r_s), spearman_p=clean_float(p_s))
    if kendall and out["pearson"] is not None:
        tau = stats.kendalltau(residual_x, residual_y)
        out.update(kendall=clean_float(tau.statistic), kendall_p=clean_float(tau.pvalue))
    if intervals:
        out["pearson_ci"] = _pair(fisher_interval(out["pearson"], n, controlled))
        out["spearman_ci"] = _pair(fisher_interval(out["spearman"], n, controlled, spearman=True))
        if out["pearson"] is not None and n >= 10:
            counts = bootstrap_counts(n, n_resamples, seed)
            out["pearson_ci_bootstrap"] = _pair(percentile_interval(weighted_pearson(residual_x, residual_y, counts)))
            if out["spearman"] is not None:
                # The rank pairs of the full sample are resampled (not re-ranked inside every resample):
                # one matrix product, and asymptotically the same interval.
                if not is_partial:
                    rank_x, rank_y = stats.rankdata(x), stats.rankdata(y)
                out["spearman_ci_bootstrap"] = _pair(percentile_interval(weighted_pearson(rank_x, rank_y, counts)))
    return out


def _pair(interval: tuple[float | None, float | None]) -> list[float | None] | None:
    low, high = interval
    return None if low is None or high is None else [clean_float(low), clean_float(high)]


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """Williams' t and its one-sided p-value that ``corr(1, 2) > corr(1, 3)`` (formula in the module doc).

    Examples
    --------
    >>> williams_test(0.6, 0.6, 0.5, n=30)
    (0.0, 0.5)
    >>> t, p = williams_test(0.7, 0.4, 0.5, n=100)
    >>> round(t, 2), p < 0.001
    (4.05, True)
    """
    if n <= 3:
        raise ValueError(f"Williams' test needs more than 3 observations, got n={n}")
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denominator = 2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / np.sqrt(denominator)
    return float(t), float(stats.t.sf(t, n - 3))


def _columns(frame: pd.DataFrame, columns: list[str], group_col: str | None, partial: bool) -> tuple[np.ndarray, np.ndarray | None]:
    values = frame[columns].to_numpy(dtype=float)
    codes = group_codes(frame[group_col].tolist()) if partial and group_col is not None else None
    return values, codes


def _complete(values: np.ndarray, codes: np.ndarray | None, columns: list[int]) -> np.ndarray | None:
    """The given columns on the rows where all are present, residualised on the groups when ``codes``."""
    block = values[:, columns]
    keep = np.isfinite(block).all(axis=1)
    if keep.sum() < 4:
        return None
    block = block[keep]
    if codes is not None:
        sub = codes[keep]
        _, sub = np.unique(sub, return_inverse=True)
        block = demean(block, sub)
    return block


def metric_correlations(
    frame: pd.DataFrame, metrics: Sequence[str], *, group_col: str | None = "group", partial: bool = True
) -> dict[str, dict[str, float | None]]:
    """Pairwise Pearson correlations between metrics (partial on ``group_col`` when ``partial``).

    Examples
    --------
    >>> frame = pd.DataFrame({"a": [0.1, 0.4, 0.2, 0.9], "b": [0.2, 0.8, 0.4, 1.8], "c": [0.9, 0.6, 0.8, 0.1]})
    >>> matrix = metric_correlations(frame, ["a", "b", "c"], group_col=None, partial=False)
    >>> round(matrix["a"]["b"], 6), round(matrix["a"]["c"], 6), matrix["b"]["b"]
    (1.0, -1.0, 1.0)
    """
    metrics = list(metrics)
    values, codes = _columns(frame, metrics, group_col, partial)
    out: dict[str, dict[str, float | None]] = {m: {} for m in metrics}
    for i, a in enumerate(metrics):
        out[a][a] = 1.0
        for j in range(i + 1, len(metrics)):
            b = metrics[j]
            block = _complete(values, codes, [i, j])
            r = None
            if block is not None and block[:, 0].std() > TOLERANCE and block[:, 1].std() > TOLERANCE:
                r = clean_float(np.corrcoef(block[:, 0], block[:, 1])[0, 1])
            out[a][b] = out[b][a] = r
    return out


def williams_matrix(
    frame: pd.DataFrame, human: str, metrics: Sequence[str], *, group_col: str | None = "group", partial: bool = True
) -> dict[str, dict[str, float | None]]:
    """``{A: {B: p}}``: one-sided Williams p-value that metric A correlates more with ``human`` than B.

    Each pair uses the rows where the human score and both metrics are present; with ``partial`` the
    correlations are those of the confounder residuals.

    Examples
    --------
    >>> frame = pd.DataFrame({"human": [1, 2, 3, 4, 5, 6, 7, 8],
    ...                       "close": [1.2, 1.9, 3.1, 4.2, 4.8, 6.1, 7.2, 7.9],
    ...                       "loose": [3, 1, 4, 2, 6, 5, 8, 7]})
    >>> p = williams_matrix(frame, "human", ["close", "loose"], group_col=None, partial=False)
    >>> p["close"]["loose"] < 0.05 < p["loose"]["close"]
    True
    """
    metrics = list(metrics)
    values, codes = _columns(frame, [human, *metrics], group_col, partial)
    out: dict[str, dict[str, float | None]] = {m: {} for m in metrics}
    for i, a in enumerate(metrics):
        for j in range(i + 1, len(metrics)):
            b = metrics[j]
            block = _complete(values, codes, [0, i + 1, j + 1])
            p_ab = p_ba = None
            if block is not None and np.all(block.std(axis=0) > TOLERANCE):
                corr = np.corrcoef(block, rowvar=False)
                r12, r13, r23 = corr[0, 1], corr[0, 2], corr[1, 2]
                if abs(r23) < 1:
                    _, p_ab = williams_test(r12, r13, r23, len(block))
                    _, p_ba = williams_test(r13, r12, r23, len(block))
            out[a][b] = clean_float(p_ab)
            out[b][a] = clean_float(p_ba)
    return out
