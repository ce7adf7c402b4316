"""Binary inconsistency detection (AggreFact, Tang et al. 2023): balanced accuracy with a tuned threshold.

A summary is labelled consistent when its human factuality is 1 (no sentence judged non-factual). A metric
predicts "consistent" when its score is at least the threshold. The threshold maximises balanced accuracy
(scikit-learn's definition: mean of the recall of both classes) on the *validation* split and is then
applied to the *test* split:

* ``per_dataset``: one threshold per dataset (tuned on that dataset's validation summaries), reported on
  its test summaries and per system category (AggreFact's SOTA / XFORMER / OLD);
* ``single_threshold``: one threshold tuned on all validation summaries, reported per dataset and overall.

95% confidence intervals are percentile bootstraps of the test summaries (threshold held fixed; 1000
resamples, fixed seed, vectorised). The pooled single threshold mixes datasets whose score scales differ
(CNN/DM and XSum), so the per-dataset setting is AggreFact's and shown first.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import roc_curve

from ._util import clean_float
from .resampling import bootstrap_counts, percentile_interval

# AggreFact's system categories; names are matched case-insensitively. FRANK's ``bus`` is Bottom-Up
# (Gehrmann et al. 2018), an LSTM pointer-generator with content selection, so it is OLD like ``bottomup``.
SYSTEM_CATEGORIES: dict[str, str] = {
    **{name: "SOTA" for name in ("bart", "pegasus", "t5", "bart-large", "bart_large")},
    **{name: "XFORMER" for name in ("bert_sum", "bertsum", "berts2s", "trans2s", "transformer")},
    **{name: "OLD" for name in ("pgn", "s2s", "ptgen", "tconvs2s", "pointer-generator", "seq2seq", "bus", "bottomup", "bottom_up")},
}
CATEGORY_ORDER = ("SOTA", "XFORMER", "OLD", "other")


def system_category(system: str, table: Mapping[str, str] = SYSTEM_CATEGORIES) -> str:
    return table.get(system.lower(), "other")


def best_threshold(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """The threshold maximising balanced accuracy of ``score >= threshold`` vs ``labels``; ``None`` if one class."""
    y = np.asarray(labels, dtype=bool)
    x = np.asarray(scores, dtype=float)
    if y.all() or not y.any():
        return None
    fpr, tpr, thresholds = roc_curve(y, x)
    balanced = (tpr + 1 - fpr) / 2
    best = thresholds[int(np.argmax(balanced))]
    return float(best) if np.isfinite(best) else float(x.max()) + 1.0


def _bootstrap_ci(y: np.ndarray, pred: np.ndarray, n_resamples: int, seed: int) -> tuple[float | None, float | None]:
    # Vectorised: each resample is a row of multiplicities; resamples with one class only are dropped.
    counts = bootstrap_counts(len(y), n_resamples, seed)
    # One matrix product gives, per resample, the positives, negatives, true positives and true negatives.
    positives, negatives, true_pos, true_neg = (counts @ np.column_stack([y, ~y, pred & y, ~pred & ~y]).astype(float)).T
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where((positives > 0) & (negatives > 0), (true_pos / positives + true_neg / negatives) / 2, np.nan)
    low, high = percentile_interval(values)
    return clean_float(low), clean_float(high)


class _IntervalBatch:
    """Defers bootstrap intervals so that every metric evaluated on the same rows shares one matrix product
    with the resample counts (the counts are read once per subset instead of once per metric)."""

    def __init__(self, n_resamples: int, seed: int):
        self.n_resamples, self.seed = n_resamples, seed
        self.pending: dict[bytes, tuple[np.ndarray, list[tuple[np.ndarray, dict]]]] = {}

    def add(self, rows: np.ndarray, y: np.ndarray, pred: np.ndarray, entry: dict) -> None:
        key = np.asarray(rows).tobytes() + y.tobytes()
        self.pending.setdefault(key, (y, []))[1].append((pred, entry))

    def flush(self) -> None:
        for y, jobs in self.pending.values():
            counts = bootstrap_counts(len(y), self.n_resamples, self.seed)
            columns = [y, ~y] + [c for pred, _ in jobs for c in (pred & y, ~pred & ~y)]
            sums = counts @ np.column_stack(columns).astype(float)
            positives, negatives = sums[:, 0], sums[:, 1]
            for k, (_, entry) in enumerate(jobs):
                true_pos, true_neg = sums[:, 2 + 2 * k], sums[:, 3 + 2 * k]
                with np.errstate(invalid="ignore", divide="ignore"):
                    values = np.where((positives > 0) & (negatives > 0), (true_pos / positives + true_neg / negatives) / 2, np.nan)
                low, high = percentile_interval(values)
                entry["ci_low"], entry["ci_high"] = clean_float(low), clean_float(high)
        self.pending.clear()


def evaluate_threshold(
    scores: np.ndarray, labels: np.ndarray, threshold: float, *, n_resamples: int = 1000, seed: int = 0,
    rows: np.ndarray | None = None, batch: _IntervalBatch | None = None,
) -> dict:
    """Balanced accuracy of a fixed threshold with a bootstrap 95% CI; ``{"balanced_accuracy", "ci_low", "ci_high", "n"}``.

    With ``batch`` (and ``rows``, the row identities), the interval is filled in by ``batch.flush()``.
    """
    y = np.asarray(labels, dtype=bool)
    pred = np.asarray(scores, dtype=float) >= threshold
    if len(y) == 0 or y.all() or not y.any():
        return {"balanced_accuracy": None, "ci_low": None, "ci_high": None, "n": len(y)}
    # scikit-learn's definition (mean recall of both classes), computed directly: it runs thousands of times.
    value = ((pred & y).sum() / y.sum() + (~pred & ~y).sum() / (~y).sum()) / 2
    entry = {"balanced_accuracy": clean_float(value), "ci_low": None, "ci_high": None, "n": len(y)}
    if batch is not None and rows is not None:
        batch.add(rows, y, pred, entry)
    else:
        entry["ci_low"], entry["ci_high"] = _bootstrap_ci(y, pred, n_resamples, seed)
    return entry


def balanced_accuracy_report(
    frame: pd.DataFrame, metrics: Sequence[str], *, n_resamples: int = 1000
) -> dict | None:
    """AggreFact-style balanced accuracy per metric.

    ``frame``: one row per summary with ``label`` (bool, consistent), ``split``, ``dataset``, ``system`` and
    one column per metric (higher = more faithful). Returns ``None`` without both a validation and a test
    summary, else ``{M: {"per_dataset": {DS: {"threshold", "balanced_accuracy", "ci_low", "ci_high", "n",
    "by_system_category": {CAT: {...}}}}, "single_threshold": {"threshold", "all": {...}, DS: {...}}}}``.
    """
    if frame.empty or not (frame["split"] == "valid").any() or not (frame["split"] == "test").any():
        return None
    frame = frame.assign(category=frame["system"].map(system_category))
    batch = _IntervalBatch(n_resamples, 0)

    def evaluate(sub: pd.DataFrame, metric: str, threshold: float) -> dict:
        return evaluate_threshold(sub[metric].to_numpy(), sub["label"].to_numpy(), threshold,
                                  n_resamples=n_resamples, rows=sub.index.to_numpy(), batch=batch)

    out: dict[str, dict] = {}
    for metric in metrics:
        rows = frame[frame[metric].notna()]
        valid, test = rows[rows["split"] == "valid"], rows[rows["split"] == "test"]
        per_dataset = {}
        for dataset, test_ds in test.groupby("dataset", sort=True):
            valid_ds = valid[valid["dataset"] == dataset]
            threshold = best_threshold(valid_ds[metric], valid_ds["label"])
            if threshold is None:
                per_dataset[str(dataset)] = None
                continue
            entry = evaluate(test_ds, metric, threshold)  # the batch fills this very dict's interval
            entry["threshold"] = threshold
            entry["by_system_category"] = {str(cat): evaluate(sub, metric, threshold) for cat, sub in test_ds.groupby("category", sort=True)}
            per_dataset[str(dataset)] = entry
        threshold = best_threshold(valid[metric], valid["label"])
        single = None
        if threshold is not None:
            single = {"threshold": threshold, "all": evaluate(test, metric, threshold)}
            for dataset, test_ds in test.groupby("dataset", sort=True):
                single[str(dataset)] = evaluate(test_ds, metric, threshold)
        out[metric] = {"per_dataset": per_dataset, "single_threshold": single}
    batch.flush()
    return out
