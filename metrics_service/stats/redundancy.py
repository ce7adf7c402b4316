"""Adaptive redundancy: when an item has enough judgements, and how well posteriors are calibrated.

Plain functions (numpy only). An *item* is what one worker judges in one assignment (a summary with its
sentences); its label is settled when every sentence label's posterior reaches the threshold.
"""
from __future__ import annotations

import numpy as np


def needs_more_workers(min_posterior: np.ndarray, n_workers: np.ndarray, *, min_workers: int, max_workers: int,
                       threshold: float) -> np.ndarray:
    """The stop rule, per item: more workers are needed while the item has fewer than ``min_workers``, or
    fewer than ``max_workers`` and the least certain of its labels has a posterior below ``threshold``.

    ``min_posterior``: per item, the smallest posterior of its sentence labels (NaN when not judged yet);
    ``n_workers``: per item, the judgements it has.

    Examples
    --------
    >>> needs_more_workers(np.array([np.nan, 0.99, 0.7, 0.7]), np.array([0, 3, 3, 5]),
    ...                    min_workers=3, max_workers=5, threshold=0.95).tolist()
    [True, False, True, False]
    """
    if not 1 <= min_workers <= max_workers:
        raise ValueError(f"need 1 <= min_workers <= max_workers, got {min_workers} and {max_workers}")
    if not 0.5 <= threshold <= 1.0:
        raise ValueError(f"the posterior threshold must be in [0.5, 1], got {threshold}")
    posterior = np.nan_to_num(np.asarray(min_posterior, dtype=float), nan=0.0)
    n = np.asarray(n_workers)
    return (n < min_workers) | ((n < max_workers) & (posterior < threshold))


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray, n_bins: int = 10) -> float:
    """Expected calibration error: over ``n_bins`` equal-width bins of confidence, the mean absolute gap
    between mean confidence and accuracy, weighted by the bin's share of labels (Naeini et al., 2015).

    Examples
    --------
    >>> round(expected_calibration_error(np.array([0.9, 0.9, 0.6, 0.6]), np.array([1, 1, 1, 0])), 6)
    0.1
    """
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=float)
    if confidence.size == 0:
        return float("nan")
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in np.unique(bins):
        inside = bins == b
        total += inside.mean() * abs(confidence[inside].mean() - correct[inside].mean())
    return float(total)


def interval_coverage(low: np.ndarray, high: np.ndarray, value: np.ndarray) -> float:
    """Share of intervals ``[low, high]`` (bounds included) that hold the true ``value``: the empirical
    coverage that a 95% interval should bring near 0.95 on data with known truth.

    Examples:
        >>> interval_coverage(np.array([0.0, 0.5, 0.2]), np.array([1.0, 0.9, 0.4]), np.array([1.0, 0.4, 0.3]))
        0.6666666666666666
    """
    low, high, value = (np.asarray(x, dtype=float) for x in (low, high, value))
    if value.size == 0:
        return float("nan")
    return float(((low <= value) & (value <= high)).mean())
