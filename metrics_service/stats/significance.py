"""Comparisons a paper reports beside the summary-level correlations.

* **System-level correlation**: human factuality and the metric are averaged per system (optionally per
  system and dataset, since a system's summaries of CNN/DM and XSum are different tasks), then Pearson,
  Spearman and Kendall tau-b (scipy) are taken over those means; ``n`` is the number of systems. With
  the 9 systems of FRANK these are coarse: the p-values say so.
* **Paired bootstrap of a correlation difference**: ``r(human, A) - r(human, B)`` with a 95% percentile
  interval from resampling the *rows* jointly (the same resample for both metrics, so their dependence
  is kept; rows where the human score or either metric is missing are dropped first). For partial
  correlations the full-sample residuals are resampled (as ``correlation``'s bootstrap), for Spearman
  their full-sample ranks. An interval that excludes 0 agrees with a small Williams p-value; unlike
  Williams' test it assumes no normality.
* **Holm correction** (Holm 1979) of a family of p-values, as statsmodels' ``multipletests(method="holm")``
  computes it: a report showing a matrix of Williams tests or one p-value per metric shows the adjusted
  values beside the raw.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ._util import clean_float
from .correlation import RESIDUAL_DIGITS, TOLERANCE, demean, group_codes
from .resampling import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_counts,
    percentile_interval,
    weighted_pearson,
)

METHODS = ("pearson", "spearman", "kendall")


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values; ``None`` entries stay ``None`` and are not counted in the family.

    The step-down adjustment: with the ``m`` p-values sorted ascending, the ``i``-th (from 0) becomes the
    largest of ``(m - j) * p_j`` over ``j <= i``, capped at 1; each value returns to its place. The same values
    as statsmodels' ``multipletests(method="holm")`` (``tests/unit/test_holm.py`` compares them), written here
    because that function runs a full garbage collection on every call, whose cost grows with the process's heap
    (0.2 s a call in a test process holding the FRANK benchmark), for arithmetic on a handful of numbers.

    Examples
    --------
    >>> [round(p, 6) if p is not None else None for p in holm([0.01, 0.04, None, 0.03])]
    [0.03, 0.06, None, 0.06]
    >>> holm([0.5, 0.6])
    [1.0, 1.0]
    """
    present = [i for i, p in enumerate(pvalues) if p is not None]
    out: list[float | None] = [None] * len(pvalues)
    if not present:
        return out
    values = np.array([float(pvalues[i]) for i in present])
    order = np.argsort(values, kind="stable")
    stepped = np.maximum.accumulate(values[order] * np.arange(len(values), 0, -1))
    adjusted = np.empty_like(values)
    adjusted[order] = np.minimum(stepped, 1.0)
    for i, value in zip(present, adjusted, strict=True):
        out[i] = clean_float(value)
    return out


def holm_matrix(matrix: Mapping[str, Mapping[str, float | None]]) -> dict[str, dict[str, float | None]]:
    """Holm over every off-diagonal entry of a ``{A: {B: p}}`` matrix (e.g. Williams' tests) as one family."""
    keys = [(a, b) for a, row in matrix.items() for b in row if a != b]
    adjusted = holm([matrix[a][b] for a, b in keys])
    out: dict[str, dict[str, float | None]] = {a: {} for a in matrix}
    for (a, b), value in zip(keys, adjusted, strict=True):
        out[a][b] = value
    return out


def system_level_correlation(
    frame: pd.DataFrame, human: str, metrics: Sequence[str], *, by: Sequence[str] = ("system",)
) -> dict[str, dict] | None:
    """Correlations of per-system means: ``{metric: {"pearson", "pearson_p", "spearman", "spearman_p",
    "kendall", "kendall_p", "n"}}``; ``None`` without a metric. ``by``: the columns defining a system
    (``("system", "dataset")`` keeps a system's datasets apart). Each metric uses its scored rows.
    """
    if not metrics or frame.empty:
        return None
    out = {}
    for metric in metrics:
        rows = frame[[*by, human, metric]].dropna()
        means = rows.groupby(list(by), sort=True)[[human, metric]].mean()
        entry: dict = {"n": len(means), **{k: None for m in METHODS for k in (m, f"{m}_p")}}
        x, y = means[human].to_numpy(dtype=float), means[metric].to_numpy(dtype=float)
        if len(means) >= 3 and np.std(x) > TOLERANCE and np.std(y) > TOLERANCE:
            for name, function in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
                result = function(x, y)
                entry[name], entry[f"{name}_p"] = clean_float(result.statistic), clean_float(result.pvalue)
        out[metric] = entry
    return out


def _prepared(x: np.ndarray, y: np.ndarray, z: np.ndarray, groups: Sequence | None, method: str) -> np.ndarray:
    """The three columns the bootstrap resamples: residuals (partial) or raw values, ranked for Spearman."""
    block = np.column_stack([x, y, z])
    if groups is not None:
        block = demean(block, group_codes(groups)).round(RESIDUAL_DIGITS)
    if method == "spearman":
        block = np.column_stack([stats.rankdata(block[:, j]) for j in range(3)])
    return block


def paired_bootstrap_difference(
    human: Sequence[float], metric_a: Sequence[float], metric_b: Sequence[float], groups: Sequence | None = None, *,
    method: str = "pearson", n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
) -> dict:
    """``r(human, A) - r(human, B)`` with a paired 95% percentile bootstrap interval (see the module doc).

    ``method``: ``"pearson"`` or ``"spearman"``; ``groups`` (one confounder label per row) makes both
    correlations partial. Returns ``{"difference", "ci": [low, high] | None, "n", "method"}``; ``None``
    values when fewer than 10 complete rows or a constant column.
    """
    if method not in ("pearson", "spearman"):
        raise ValueError(f"unknown method {method!r}; expected pearson or spearman")
    x, y, z = (np.asarray(v, dtype=float) for v in (human, metric_a, metric_b))
    keep = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
    labels = None if groups is None else np.asarray(list(groups), dtype=object)[keep]
    x, y, z = x[keep], y[keep], z[keep]
    out = {"difference": None, "ci": None, "n": int(keep.sum()), "method": method}
    if len(x) < 10:
        return out
    block = _prepared(x, y, z, labels, method)
    if np.any(block.std(axis=0) < TOLERANCE):
        return out
    corr = np.corrcoef(block, rowvar=False)
    out["difference"] = clean_float(corr[0, 1] - corr[0, 2])
    counts = bootstrap_counts(len(x), n_resamples, seed)
    values = weighted_pearson(block[:, 0], block[:, 1], counts) - weighted_pearson(block[:, 0], block[:, 2], counts)
    low, high = percentile_interval(values)
    out["ci"] = None if low is None else [clean_float(low), clean_float(high)]
    return out


def _all_pairs_at_once(
    human: np.ndarray, values: np.ndarray, groups: Sequence | None, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Full-sample and per-resample Pearson of ``human`` with every column of ``values`` (all rows complete):
    one matrix product of the resample counts with the weighted sums, instead of one per pair."""
    block = np.column_stack([human, values])
    if groups is not None:
        block = demean(block, group_codes(groups)).round(RESIDUAL_DIGITS)
    h, m = block[:, 0], block[:, 1:]
    counts = bootstrap_counts(len(h), n_resamples, seed)
    sums = counts @ np.column_stack([np.ones_like(h), h, h * h, m, m * m, h[:, None] * m])
    k = m.shape[1]
    total, s_h, s_hh = sums[:, 0:1], sums[:, 1:2], sums[:, 2:3]
    s_m, s_mm, s_hm = sums[:, 3:3 + k], sums[:, 3 + k:3 + 2 * k], sums[:, 3 + 2 * k:]
    cov = s_hm - s_h * s_m / total
    var = (s_hh - s_h * s_h / total) * (s_mm - s_m * s_m / total)
    with np.errstate(invalid="ignore", divide="ignore"):
        resampled = np.where(var > 0, cov / np.sqrt(np.maximum(var, 0)), np.nan)
    full = np.array([np.corrcoef(h, m[:, j])[0, 1] if m[:, j].std() > TOLERANCE else np.nan for j in range(k)])
    return full, resampled


def bootstrap_difference_matrix(
    frame: pd.DataFrame, human: str, metrics: Sequence[str], *, group_col: str | None = "group", partial: bool = True,
    method: str = "pearson", n_resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, dict[str, dict]] | None:
    """``{A: {B: paired_bootstrap_difference(...)}}`` for every ordered pair (B's row is A's negated).

    When every metric is scored wherever the human score is (the usual case), all pairs share their rows
    and Pearson differences come from one matrix product (identical to the pairwise computation);
    otherwise each pair uses its own complete rows.
    """
    metrics = list(metrics)
    if len(metrics) < 2:
        return None
    groups = frame[group_col].tolist() if partial and group_col is not None else None
    rated = frame[frame[human].notna()]
    shared = method == "pearson" and len(rated) >= 10 and bool(rated[metrics].notna().all().all())
    if shared:
        labels = None if groups is None else rated[group_col].tolist()
        human_values = rated[human].to_numpy(dtype=float)
        full, resampled = _all_pairs_at_once(human_values, rated[metrics].to_numpy(dtype=float), labels, n_resamples, DEFAULT_SEED)
    out: dict[str, dict[str, dict]] = {m: {} for m in metrics}
    for i, a in enumerate(metrics):
        for j in range(i + 1, len(metrics)):
            b = metrics[j]
            if shared:
                entry = {"difference": None, "ci": None, "n": len(rated), "method": method}
                if np.isfinite(full[i]) and np.isfinite(full[j]) and human_values.std() > TOLERANCE:
                    entry["difference"] = clean_float(full[i] - full[j])
                    low, high = percentile_interval(resampled[:, i] - resampled[:, j])
                    entry["ci"] = None if low is None else [clean_float(low), clean_float(high)]
            else:
                entry = paired_bootstrap_difference(frame[human], frame[a], frame[b], groups, method=method, n_resamples=n_resamples)
            out[a][b] = entry
            mirrored = dict(entry)
            if entry["difference"] is not None:
                mirrored["difference"] = -entry["difference"]
            if entry["ci"] is not None:
                mirrored["ci"] = [-entry["ci"][1], -entry["ci"][0]]
            out[b][a] = mirrored
    return out
