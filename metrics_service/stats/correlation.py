"""Metric-human correlations, partial on the confounder system x dataset (FRANK section 6, appendix).

FRANK shows that system and dataset drive both metric values and human factuality, so plain correlations
over a pooled benchmark mostly rank systems. A partial correlation removes that: both variables are
regressed (ordinary least squares, numpy ``lstsq``) on the one-hot coding of the confounder plus an
intercept, and the residuals are correlated. Spearman's partial correlation does the same on ranks.
p-values of partial correlations use a t statistic with ``n - 2 - (k - 1)`` degrees of freedom for
``k`` confounder levels (the residuals lost ``k - 1`` further degrees of freedom).

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

TOLERANCE = 1e-10
EMPTY = {"pearson": None, "pearson_p": None, "spearman": None, "spearman_p": None}


def partial_residuals(values: np.ndarray, groups: Sequence | None) -> np.ndarray:
    """Residuals of each column of ``values`` (n x p) after OLS on one-hot ``groups`` plus an intercept."""
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


def correlation(
    human: Sequence[float], metric: Sequence[float], groups: Sequence | None = None, *, partial: bool = True
) -> dict:
    """Pearson and Spearman correlation (with two-sided p-values) of ``metric`` with ``human``.

    Rows where either value is missing are skipped. With ``partial`` and ``groups`` (one confounder label
    per row, e.g. ``"bart|cnndm"``), both are partial correlations controlling for the groups.
    Returns ``{"pearson", "pearson_p", "spearman", "spearman_p", "n", "partial"}`` (``None`` values when
    fewer than 3 rows or a constant variable).
    """
    x = np.asarray(human, dtype=float)
    y = np.asarray(metric, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    labels = None if groups is None or not partial else np.asarray(list(groups), dtype=object)[keep]
    n = len(x)
    out = {**EMPTY, "n": n, "partial": bool(partial and labels is not None)}
    if n < 3:
        return out
    if labels is None:
        if np.std(x) == 0 or np.std(y) == 0:
            return out
        pearson = stats.pearsonr(x, y)
        spearman = stats.spearmanr(x, y)
        out.update(
            pearson=clean_float(pearson.statistic), pearson_p=clean_float(pearson.pvalue),
            spearman=clean_float(spearman.statistic), spearman_p=clean_float(spearman.pvalue),
        )
        return out
    levels = len(set(labels.tolist()))
    df = n - 2 - (levels - 1)
    residuals = partial_residuals(np.column_stack([x, y]), labels)
    ranks = partial_residuals(np.column_stack([stats.rankdata(x), stats.rankdata(y)]), labels)
    pearson, pearson_p = _pearson_with_df(residuals[:, 0], residuals[:, 1], df)
    spearman, spearman_p = _pearson_with_df(ranks[:, 0], ranks[:, 1], df)
    out.update(
        pearson=clean_float(pearson), pearson_p=clean_float(pearson_p),
        spearman=clean_float(spearman), spearman_p=clean_float(spearman_p),
    )
    return out


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """Williams' t and its one-sided p-value that ``corr(1, 2) > corr(1, 3)`` (formula in the module doc)."""
    if n <= 3:
        raise ValueError(f"Williams' test needs more than 3 observations, got n={n}")
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denominator = 2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / np.sqrt(denominator)
    return float(t), float(stats.t.sf(t, n - 3))


def _complete(frame: pd.DataFrame, columns: list[str], group_col: str | None, partial: bool) -> np.ndarray | None:
    rows = frame.dropna(subset=columns)
    if len(rows) < 4:
        return None
    values = rows[columns].to_numpy(dtype=float)
    if partial and group_col is not None:
        values = partial_residuals(values, rows[group_col].tolist())
    return values


def metric_correlations(
    frame: pd.DataFrame, metrics: Sequence[str], *, group_col: str | None = "group", partial: bool = True
) -> dict[str, dict[str, float | None]]:
    """Pairwise Pearson correlations between metrics (partial on ``group_col`` when ``partial``)."""
    out: dict[str, dict[str, float | None]] = {m: {} for m in metrics}
    for i, a in enumerate(metrics):
        out[a][a] = 1.0
        for b in metrics[i + 1:]:
            values = _complete(frame, [a, b], group_col, partial)
            r = None
            if values is not None and values[:, 0].std() > 0 and values[:, 1].std() > 0:
                r = clean_float(np.corrcoef(values[:, 0], values[:, 1])[0, 1])
            out[a][b] = out[b][a] = r
    return out


def williams_matrix(
    frame: pd.DataFrame, human: str, metrics: Sequence[str], *, group_col: str | None = "group", partial: bool = True
) -> dict[str, dict[str, float | None]]:
    """``{A: {B: p}}``: one-sided Williams p-value that metric A correlates more with ``human`` than B.

    Each pair uses the rows where the human score and both metrics are present; with ``partial`` the
    correlations are those of the confounder residuals.
    """
    out: dict[str, dict[str, float | None]] = {m: {} for m in metrics}
    for i, a in enumerate(metrics):
        for b in metrics[i + 1:]:
            values = _complete(frame, [human, a, b], group_col, partial)
            p_ab = p_ba = None
            if values is not None and np.all(values.std(axis=0) > 0):
                corr = np.corrcoef(values, rowvar=False)
                r12, r13, r23 = corr[0, 1], corr[0, 2], corr[1, 2]
                if abs(r23) < 1:
                    _, p_ab = williams_test(r12, r13, r23, len(values))
                    _, p_ba = williams_test(r13, r12, r23, len(values))
            out[a][b] = clean_float(p_ab)
            out[b][a] = clean_float(p_ba)
    return out
