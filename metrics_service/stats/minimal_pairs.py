"""Meta-evaluation on minimal pairs (BUMP section 5): a reference and its one-error edit.

* consistency = share of pairs where the metric scores the reference *strictly* higher than its edit;
* ROC AUC with the pairs' references as positives and their edits as negatives. By default (BUMP's
  definition, ``auc_references="per_pair"``) each pair contributes its reference once, so a reference
  edited into several pairs of a row counts once per pair; ``auc_references="once"`` keeps each distinct
  reference once per row;
* 95% intervals: Wilson score interval for consistency, percentile bootstrap of the pairs (1000
  resamples, fixed seed, vectorised) for ROC AUC;
* rows: all pairs, each error type (the reviewer's corrected type when present, else the requested one),
  and the intrinsic / extrinsic groups;
* significance between the best and the second-best metric of a row (pairs scored by both):
  consistency by a paired sign-flip permutation test of the per-pair differences of the 0/1 "reference
  scored higher" indicators (two-sided, Monte-Carlo with a fixed seed); ROC AUC by a paired bootstrap of
  the pairs (two-sided: twice the smaller share of resamples on either side of zero difference).

Scores must already point the same way (higher = more faithful; the caller flips lower-is-better metrics).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from taxonomies.bump import BY_CODE

from ._util import clean_float
from .resampling import (
    DEFAULT_RESAMPLES,
    bootstrap_counts,
    percentile_interval,
    weighted_auc,
    wilson_interval,
)

AUC_REFERENCES = ("per_pair", "once")


def error_kind(code: str) -> str | None:
    """``"intrinsic"``, ``"extrinsic"`` or ``None`` for a BUMP error type code."""
    error_type = BY_CODE.get(code)
    if error_type is None or error_type.intrinsic is None:
        return None
    return "intrinsic" if error_type.intrinsic else "extrinsic"


def _values(pairs: pd.DataFrame, scores: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    column = scores[metric] if metric in scores else pd.Series(dtype=float)
    ref = pairs["reference_id"].map(column).to_numpy(dtype=float)
    edit = pairs["edited_id"].map(column).to_numpy(dtype=float)
    keep = np.isfinite(ref) & np.isfinite(edit)
    return ref, edit, keep


def _positives(ref: np.ndarray, ref_ids: np.ndarray, auc_references: str) -> tuple[np.ndarray, np.ndarray]:
    """Positive scores and, per positive, the index of one pair it came from."""
    if auc_references == "per_pair":
        return ref, np.arange(len(ref))
    _, first = np.unique(ref_ids, return_index=True)
    first = np.sort(first)
    return ref[first], first


def _auc(ref: np.ndarray, edit: np.ndarray, ref_ids: np.ndarray, auc_references: str = "per_pair") -> float | None:
    positives, _ = _positives(ref, ref_ids, auc_references)
    y_true = np.r_[np.ones(len(positives)), np.zeros(len(edit))]
    return clean_float(roc_auc_score(y_true, np.r_[positives, edit]))


def _auc_interval(ref: np.ndarray, edit: np.ndarray, ref_ids: np.ndarray, auc_references: str, n_resamples: int) -> list | None:
    """Percentile bootstrap over pairs; with ``once`` a reference is in a resample when one of its pairs is."""
    n = len(ref)
    if n < 5:
        return None
    counts = bootstrap_counts(n, n_resamples)
    if auc_references == "per_pair":
        pos_counts = counts
        positives = ref
    else:
        codes, uniques = pd.factorize(pd.Series(ref_ids), sort=True)
        positives = np.empty(len(uniques))
        positives[codes] = ref
        pos_counts = np.zeros((n_resamples, len(uniques)))
        np.add.at(pos_counts.T, codes, counts.T)
        pos_counts = np.minimum(pos_counts, 1.0)
    low, high = percentile_interval(weighted_auc(positives, edit, pos_counts, counts))
    return None if low is None else [clean_float(low), clean_float(high)]


def row_statistics(
    pairs: pd.DataFrame, scores: pd.DataFrame, metric: str, *, auc_references: str = "per_pair", n_resamples: int = DEFAULT_RESAMPLES
) -> dict:
    """``{"consistency", "consistency_ci", "roc_auc", "roc_auc_ci", "n_pairs", "n_missing"}`` of one metric."""
    ref, edit, keep = _values(pairs, scores, metric)
    n = int(keep.sum())
    if n == 0:
        return {"consistency": None, "consistency_ci": None, "roc_auc": None, "roc_auc_ci": None, "n_pairs": 0, "n_missing": len(pairs)}
    ref_ids = pairs["reference_id"].to_numpy()[keep]
    wins = int((ref[keep] > edit[keep]).sum())
    low, high = wilson_interval(wins, n)
    return {
        "consistency": clean_float(wins / n),
        "consistency_ci": None if low is None else [clean_float(low), clean_float(high)],
        "roc_auc": _auc(ref[keep], edit[keep], ref_ids, auc_references),
        "roc_auc_ci": _auc_interval(ref[keep], edit[keep], ref_ids, auc_references, n_resamples),
        "n_pairs": n,
        "n_missing": int(len(pairs) - n),
    }


def paired_permutation_test(a: np.ndarray, b: np.ndarray, *, n_resamples: int = 10000, seed: int = 0) -> float:
    """Two-sided paired sign-flip permutation p-value of ``mean(a - b) == 0`` (add-one smoothed).

    Examples
    --------
    >>> paired_permutation_test([1, 0, 1], [1, 0, 1])
    1.0
    >>> paired_permutation_test([1] * 10, [0] * 10) < 0.01  # every sign flip but two gives a smaller mean
    True
    """
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    observed = abs(diff.mean())
    if not diff.any():
        return 1.0
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, len(diff)))
    extreme = np.abs((signs * diff).mean(axis=1)) >= observed - 1e-12
    return float((extreme.sum() + 1) / (n_resamples + 1))


def paired_bootstrap_auc(
    ref_a: np.ndarray, edit_a: np.ndarray, ref_b: np.ndarray, edit_b: np.ndarray, *, n_resamples: int = 1000, seed: int = 0
) -> float:
    """Two-sided paired bootstrap p-value of ``AUC(a) == AUC(b)``, resampling pairs (same resamples for both)."""
    counts = bootstrap_counts(len(ref_a), n_resamples, seed)
    diffs = weighted_auc(ref_a, edit_a, counts, counts) - weighted_auc(ref_b, edit_b, counts, counts)
    diffs = diffs[np.isfinite(diffs)]
    share = min((diffs <= 0).mean(), (diffs >= 0).mean())
    return float(min(1.0, 2 * share))


def _significance(pairs: pd.DataFrame, scores: pd.DataFrame, ranking: dict[str, float | None], stat: str, n_resamples: int) -> dict | None:
    ranked = sorted(((v, m) for m, v in ranking.items() if v is not None), reverse=True)
    if len(ranked) < 2:
        return None
    (_, best), (_, second) = ranked[0], ranked[1]
    ref_a, edit_a, keep_a = _values(pairs, scores, best)
    ref_b, edit_b, keep_b = _values(pairs, scores, second)
    keep = keep_a & keep_b
    if keep.sum() < 2:
        return None
    if stat == "consistency":
        p = paired_permutation_test((ref_a[keep] > edit_a[keep]).astype(float), (ref_b[keep] > edit_b[keep]).astype(float), n_resamples=n_resamples)
        method = f"paired sign-flip permutation test, {n_resamples} resamples"
    else:
        resamples = max(200, n_resamples // 10)
        p = paired_bootstrap_auc(ref_a[keep], edit_a[keep], ref_b[keep], edit_b[keep], n_resamples=resamples)
        method = f"paired bootstrap of pairs, {resamples} resamples"
        if p == 0:
            # No resample crossed zero: all the bootstrap can say is that p is below its resolution 1/B.
            return {"best": best, "second": second, "p_value": clean_float(1 / resamples), "p_value_bound": "below",
                    "p_value_text": f"< 1/{resamples}", "n_pairs": int(keep.sum()), "method": method}
    return {"best": best, "second": second, "p_value": clean_float(p), "p_value_bound": None, "p_value_text": f"{p:.1e}",
            "n_pairs": int(keep.sum()), "method": method}


def pair_statistics(
    pairs: pd.DataFrame,
    scores: pd.DataFrame,
    metrics: Sequence[str],
    *,
    n_resamples: int = 5000,
    auc_references: str = "per_pair",
    compare: Sequence[str] | None = None,
) -> dict | None:
    """Consistency and ROC AUC of each metric on minimal pairs, overall and per error type and kind.

    ``pairs``: ``reference_id, edited_id, error_type`` (BUMP codes, may be empty); ``scores``: wide table
    indexed by summary id, one column per metric. Returns ``None`` without pairs, else
    ``{"metrics": {M: {"consistency", "roc_auc", "n_pairs", "n_missing", "by_error_type": {T: {...}},
    "by_kind": {"intrinsic"|"extrinsic": {...}}}}, "significance": {ROW: {"consistency": {...},
    "roc_auc": {...}}}, "pair_counts": {ROW: n}, "auc_references"}`` where ROW is ``"all"``, a type or a
    kind. ``compare`` limits the best-vs-second significance to these metrics (default: all).

    Examples
    --------
    >>> pairs = pd.DataFrame({"reference_id": [1, 2, 3], "edited_id": [11, 12, 13], "error_type": ["", "", ""]})
    >>> scores = pd.DataFrame({"m": [0.9, 0.8, 0.7, 0.5, 0.85, 0.9]}, index=[1, 2, 3, 11, 12, 13])
    >>> result = pair_statistics(pairs, scores, ["m"], n_resamples=100)["metrics"]["m"]
    >>> round(result["consistency"], 3), result["roc_auc"], result["n_pairs"]
    (0.333, 0.5, 3)
    """
    if auc_references not in AUC_REFERENCES:
        raise ValueError(f"unknown auc_references {auc_references!r}; expected one of {', '.join(AUC_REFERENCES)}")
    if pairs.empty or not metrics:
        return None
    pairs = pairs.reset_index(drop=True)
    kinds = pairs["error_type"].map(error_kind)
    rows: dict[str, pd.DataFrame] = {"all": pairs}
    types = sorted(t for t in pairs["error_type"].unique() if t)
    for error_type in types:
        rows[error_type] = pairs[pairs["error_type"] == error_type]
    for kind in ("intrinsic", "extrinsic"):
        if (kinds == kind).any():
            rows[kind] = pairs[kinds == kind]
    per_row = {
        row: {m: row_statistics(subset, scores, m, auc_references=auc_references) for m in metrics} for row, subset in rows.items()
    }
    result_metrics = {}
    for metric in metrics:
        entry = dict(per_row["all"][metric])
        entry["by_error_type"] = {t: per_row[t][metric] for t in types}
        entry["by_kind"] = {k: per_row[k][metric] for k in ("intrinsic", "extrinsic") if k in per_row}
        result_metrics[metric] = entry
    significance = {}
    for row, stats_by_metric in per_row.items():
        significance[row] = {
            stat: _significance(
                rows[row], scores, {m: s[stat] for m, s in stats_by_metric.items() if compare is None or m in compare}, stat, n_resamples
            )
            for stat in ("consistency", "roc_auc")
        }
    counts = {row: len(subset) for row, subset in rows.items()}
    return {"metrics": result_metrics, "significance": significance, "pair_counts": counts, "auc_references": auc_references}
