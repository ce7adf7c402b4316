"""Error detectors measured against human error spans, word by word.

AggreFact asks at summary level which share of the summaries with an error type a detector flags. Here the
same question is asked of words: each detector gives every summary word an *error score* (higher = more
likely wrong: a faithfulness score is negated by the caller), and for each unified type

* the positives are the words the humans gave that type, the negatives the words no human rule marked
  (words of another type are left out, so a type is not credited for another type's words);
* ROC AUC is computed on all of them (ties count one half), and balanced accuracy at the threshold that
  maximises it on the same words (:func:`~metrics_service.stats.detection.best_threshold`: an in-sample,
  optimistic figure, as the threshold is tuned on the words it is measured on);
* 95% intervals come from a bootstrap over *summaries* (the words of one summary are drawn together, since
  they are not independent), with the shared resample counts of :mod:`.resampling`.

``any_error`` pools every type. Pure numpy and pandas; no Django.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from taxonomies.unified import UNIFIED_TYPES

from ._util import clean_float
from .detection import balanced_accuracy_present, best_threshold
from .resampling import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_counts, percentile_interval, weighted_auc

ANY_ERROR = "any_error"
TARGETS: tuple[str, ...] = (*UNIFIED_TYPES, ANY_ERROR)


def token_auc(labels: Sequence[bool], scores: Sequence[float]) -> float | None:
    """ROC AUC of error scores against word labels (Mann-Whitney, ties one half); ``None`` with one class.

    Examples
    --------
    >>> token_auc([True, False, False, True], [0.9, 0.1, 0.9, 0.8])
    0.625
    """
    y = np.asarray(labels, dtype=bool)
    x = np.asarray(scores, dtype=float)
    if y.all() or not y.any():
        return None
    ones = np.ones((1, len(y)))
    return clean_float(weighted_auc(x[y], x[~y], ones[:, y], ones[:, ~y])[0])


def _interval(values: np.ndarray) -> list[float | None]:
    low, high = percentile_interval(values)
    return [clean_float(low), clean_float(high)]


def detection_cell(labels: np.ndarray, scores: np.ndarray, clusters: np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES,
                   seed: int = DEFAULT_SEED) -> dict:
    """AUC and balanced accuracy at the tuned threshold of one detector on one type, with summary-bootstrap
    intervals; ``clusters`` numbers each word's summary 0..k-1.

    Returns ``{"auc", "auc_ci", "balanced_accuracy", "balanced_accuracy_ci", "threshold", "n_error_words",
    "n_correct_words", "n_summaries"}`` (figures ``None`` with one class only).

    Examples
    --------
    >>> cell = detection_cell(np.array([True, False, True, False]), np.array([0.9, 0.2, 0.7, 0.4]),
    ...                       np.array([0, 0, 1, 1]), n_resamples=200)
    >>> cell["auc"], cell["balanced_accuracy"], cell["threshold"]
    (1.0, 1.0, 0.7)
    """
    y = np.asarray(labels, dtype=bool)
    x = np.asarray(scores, dtype=float)
    cell: dict = {"auc": None, "auc_ci": [None, None], "balanced_accuracy": None, "balanced_accuracy_ci": [None, None],
                  "threshold": None, "n_error_words": int(y.sum()), "n_correct_words": int((~y).sum()),
                  "n_summaries": len(np.unique(clusters))}
    threshold = best_threshold(x, y)
    if threshold is None:
        return cell
    pred = x >= threshold
    cell.update(auc=token_auc(y, x), threshold=clean_float(threshold), balanced_accuracy=clean_float(balanced_accuracy_present(y, pred)))
    # A resample draws summaries; every word weighs as often as its summary was drawn.
    _, cluster_index = np.unique(clusters, return_inverse=True)
    weights = bootstrap_counts(int(cluster_index.max()) + 1, n_resamples, seed)[:, cluster_index]
    cell["auc_ci"] = _interval(weighted_auc(x[y], x[~y], weights[:, y], weights[:, ~y]))
    positives, negatives, true_pos, true_neg = (weights @ np.column_stack([y, ~y, pred & y, ~pred & ~y]).astype(float)).T
    with np.errstate(invalid="ignore", divide="ignore"):
        balanced = np.where((positives > 0) & (negatives > 0), (true_pos / positives + true_neg / negatives) / 2, np.nan)
    cell["balanced_accuracy_ci"] = _interval(balanced)
    return cell


def token_detection_report(words: pd.DataFrame, detectors: Sequence[str], *, n_resamples: int = DEFAULT_RESAMPLES,
                           seed: int = DEFAULT_SEED) -> dict[str, dict[str, dict]]:
    """Per detector and target (each unified type, then ``any_error``): :func:`detection_cell`.

    ``words``: one row per summary word with ``summary_id``, a boolean column per unified type (the human
    labels, e.g. from :func:`~metrics_service.stats.spans.token_truth`) and one error-score column per
    detector; a missing score (a word the detector does not score, e.g. CoCo's function words) leaves the
    word out of that detector's figures.
    """
    types = words[list(UNIFIED_TYPES)].to_numpy(dtype=bool)
    erroneous = types.any(axis=1)
    out: dict[str, dict[str, dict]] = {}
    for detector in detectors:
        scores = words[detector].to_numpy(dtype=float)
        scored = np.isfinite(scores)
        cells = {}
        for target in TARGETS:
            positive = erroneous if target == ANY_ERROR else types[:, UNIFIED_TYPES.index(target)]
            rows = scored & (positive | ~erroneous)
            cells[target] = detection_cell(positive[rows], scores[rows], words["summary_id"].to_numpy()[rows],
                                           n_resamples=n_resamples, seed=seed)
        out[detector] = cells
    return out
