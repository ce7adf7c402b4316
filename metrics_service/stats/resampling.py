"""Vectorised bootstrap helpers: every resample is a row of multiplicities, never a Python loop.

A bootstrap resample of ``n`` rows is described by its *counts*: how many times each original row was
drawn (a multinomial draw of ``n`` with equal probabilities). A statistic of the resample is then the
*weighted* statistic of the original rows, so ``B`` resamples are a few ``B x n`` matrix operations.
Seeds are fixed, so identical data in the same row order give identical intervals; callers sort their
rows by stable keys first, which makes the result independent of database row order too.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
LEVEL = 0.95


def bootstrap_counts(n: int, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``n_resamples x n`` matrix of multiplicities: row b says how often each of the n rows is in resample b.

    Resample b draws n row indices uniformly with replacement (seeded); the same (n, resamples, seed) give
    the same matrix, shared read-only between statistics.
    """
    return _counts(int(n), int(n_resamples), int(seed))


@lru_cache(maxsize=16)
def _counts(n: int, n_resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, n, size=(n_resamples, n))
    flat = (drawn + (np.arange(n_resamples) * n)[:, None]).ravel()
    counts = np.bincount(flat, minlength=n_resamples * n).reshape(n_resamples, n).astype(float)
    counts.flags.writeable = False
    return counts


_RANK_CACHE: dict[tuple[bytes, int], tuple[np.ndarray, np.ndarray]] = {}


def weighted_ranks(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Cached :func:`compute_weighted_ranks` (the human column recurs for every metric of a report)."""
    import hashlib

    key = (hashlib.sha1(np.ascontiguousarray(values, dtype=float).tobytes()).digest(), id(counts))
    hit = _RANK_CACHE.get(key)
    if hit is not None and hit[0] is counts:  # the entry holds its counts, so their id cannot be reused
        return hit[1]
    if len(_RANK_CACHE) >= 8:
        _RANK_CACHE.clear()
    ranks = compute_weighted_ranks(values, counts)
    ranks.flags.writeable = False
    _RANK_CACHE[key] = (counts, ranks)
    return ranks


def compute_weighted_ranks(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean rank) of ``values`` inside each weighted resample.

    ``values``: n numbers; ``counts``: B x n multiplicities. Returns B x n: the rank every original row
    would have in resample b (rows drawn zero times get a rank too, but weigh nothing).
    """
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.r_[0, np.flatnonzero(ordered[1:] != ordered[:-1]) + 1]
    sorted_counts = np.take(counts, order, axis=1)
    if len(starts) == len(ordered):  # no ties (typical of a metric's residuals): one cumulative sum
        group_rank = np.cumsum(sorted_counts, axis=1)
        group_rank -= (sorted_counts - 1) / 2
    else:
        tie_group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(ordered)]))
        group_counts = np.add.reduceat(sorted_counts, starts, axis=1)
        group_rank = np.cumsum(group_counts, axis=1) - (group_counts - 1) / 2
        group_rank = np.take(group_rank, tie_group, axis=1)
    ranks = np.empty_like(group_rank)
    ranks[:, order] = group_rank
    return ranks


def weighted_pearson(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Pearson correlation of x and y in each resample (``x``/``y``: n or B x n; ``counts``: B x n)."""
    if np.ndim(x) == 1 and np.ndim(y) == 1:
        # Fixed values: five weighted sums are one matrix product.
        sums = counts @ np.column_stack([np.ones_like(x), x, y, x * x, y * y, x * y])
        total, sx, sy, sxx, syy, sxy = sums.T
        cov = sxy - sx * sy / total
        var = (sxx - sx * sx / total) * (syy - sy * sy / total)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(var > 0, cov / np.sqrt(np.maximum(var, 0)), np.nan)
    total = counts.sum(axis=1)
    mean_x = (counts * x).sum(axis=1) / total
    mean_y = (counts * y).sum(axis=1) / total
    dx = x - mean_x[:, None]
    dy = y - mean_y[:, None]
    cov = np.einsum("ij,ij,ij->i", counts, dx, dy)
    var = np.einsum("ij,ij,ij->i", counts, dx, dx) * np.einsum("ij,ij,ij->i", counts, dy, dy)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, cov / np.sqrt(var), np.nan)


def weighted_auc(positives: np.ndarray, negatives: np.ndarray, pos_counts: np.ndarray, neg_counts: np.ndarray) -> np.ndarray:
    """ROC AUC (Mann-Whitney, ties count one half) of each weighted resample; B values."""
    values = np.r_[positives, negatives]
    counts = np.hstack([pos_counts, neg_counts])
    ranks = weighted_ranks(values, counts)
    n_pos = pos_counts.sum(axis=1)
    n_neg = neg_counts.sum(axis=1)
    rank_sum = (pos_counts * ranks[:, : len(positives)]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n_pos > 0) & (n_neg > 0), (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg), np.nan)


def percentile_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float | None, float | None]:
    """Percentile interval of the finite bootstrap values (``None`` when fewer than 10 are finite).

    Examples
    --------
    >>> low, high = percentile_interval(np.arange(101.0))  # 0, 1, ..., 100
    >>> round(low, 6), round(high, 6)
    (2.5, 97.5)
    """
    finite = values[np.isfinite(values)]
    if len(finite) < 10:
        return None, None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def wilson_interval(successes: int, n: int, level: float = LEVEL) -> tuple[float | None, float | None]:
    """Wilson score interval of a binomial proportion.

    Examples
    --------
    >>> low, high = wilson_interval(8, 10)
    >>> round(low, 3), round(high, 3)
    (0.49, 0.943)
    >>> wilson_interval(0, 0)
    (None, None)
    """
    if n == 0:
        return None, None
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))
