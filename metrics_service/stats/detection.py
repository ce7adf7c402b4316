"""Binary inconsistency detection (AggreFact, Tang et al. 2023): balanced accuracy with a tuned threshold.

A summary is labelled consistent when its human factuality is 1 (no sentence judged non-factual). Balanced
accuracy is scikit-learn's: the mean recall of the classes present in the labels.

AggreFact's procedure (``procedure="aggrefact"``, the default), as the paper's evaluation does it:

* **threshold search**: the candidate thresholds are the percentiles 0, 0.2, ..., 99.8 of the validation
  scores (``numpy.percentile``, linear interpolation); a summary is predicted consistent when its score is
  *strictly above* the threshold; the last candidate with the best validation balanced accuracy wins ties;
* **Table 4** (``table4``): one threshold per source benchmark (``benchmark``: XSumFaith, FRANK, ...) x
  summarisation corpus (``dataset``: CNN/DM, XSum) x system category (SOTA / XFORMER / OLD), tuned on that
  cell's validation summaries and applied to its test summaries; each category and corpus reports the mean of
  the benchmarks' figures weighted by their test counts;
* **Table 5** (``table5``): per corpus, one threshold tuned on all SOTA validation summaries, applied to the
  SOTA test summaries, with a 95% interval from 1000 subsamples of 80% of the test summaries drawn *without*
  replacement (``numpy.random.default_rng(seed).choice(n, int(0.8 * n), replace=False)`` per subsample, in
  order; the 2.5th and 97.5th percentiles of the subsamples' balanced accuracies);
* ``per_dataset`` and ``single_threshold`` (one threshold per corpus, one for all) use the same search and
  intervals; ``per_dataset[corpus]["by_system_category"]`` is Table 4's cell of that corpus.

The platform's earlier choices remain as ``procedure="platform"``: every distinct score is a candidate
(scikit-learn's ROC thresholds), "consistent" when the score is at least the threshold, one threshold per
corpus reused for its system categories, and percentile-bootstrap intervals (resampling with replacement).
The pooled single threshold mixes corpora whose score scales differ, so the per-corpus figures come first.
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
    **dict.fromkeys(("bart", "pegasus", "t5", "bart-large", "bart_large"), "SOTA"),
    **dict.fromkeys(("bert_sum", "bertsum", "berts2s", "trans2s", "transformer"), "XFORMER"),
    **dict.fromkeys(("pgn", "s2s", "ptgen", "tconvs2s", "pointer-generator", "seq2seq", "bus", "bottomup", "bottom_up"), "OLD"),
}
CATEGORY_ORDER = ("SOTA", "XFORMER", "OLD", "other")


PROCEDURES = ("aggrefact", "platform")
#: AggreFact's candidate thresholds: these percentiles of the validation scores.
PERCENTILE_GRID = np.arange(0, 100, 0.2)
SUBSAMPLE_FRACTION = 0.8


def system_category(system: str, table: Mapping[str, str] = SYSTEM_CATEGORIES) -> str:
    return table.get(system.lower(), "other")


def balanced_accuracy_present(labels: np.ndarray, predictions: np.ndarray) -> float:
    """scikit-learn's balanced accuracy: the mean recall over the classes present in ``labels``.

    Examples
    --------
    >>> balanced_accuracy_present(np.array([True, True, False]), np.array([True, False, False]))
    0.75
    >>> balanced_accuracy_present(np.array([True, True]), np.array([True, False]))
    0.5
    """
    y, pred = np.asarray(labels, dtype=bool), np.asarray(predictions, dtype=bool)
    recalls = [((pred == cls) & (y == cls)).sum() / (y == cls).sum() for cls in (False, True) if (y == cls).any()]
    return float(np.mean(recalls))


def aggrefact_threshold(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """AggreFact's threshold: the last of the percentiles 0, 0.2, ..., 99.8 of ``scores`` whose rule
    ``score > threshold`` has the best balanced accuracy on ``labels``; ``None`` without scores.

    Examples
    --------
    >>> aggrefact_threshold([0.1, 0.2, 0.8, 0.9], [False, False, True, True]) < 0.8
    True
    """
    x = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    if len(x) == 0:
        return None
    candidates = np.percentile(x, PERCENTILE_GRID)
    predicted = x[None, :] > candidates[:, None]  # one row per candidate
    recalls = []
    if (~y).any():
        recalls.append((~predicted & ~y).sum(axis=1) / (~y).sum())
    if y.any():
        recalls.append((predicted & y).sum(axis=1) / y.sum())
    balanced = np.mean(recalls, axis=0)
    last_best = len(balanced) - 1 - int(np.argmax(balanced[::-1]))
    return float(candidates[last_best])


def subsample_interval(
    labels: np.ndarray, predictions: np.ndarray, *, n_resamples: int = 1000, fraction: float = SUBSAMPLE_FRACTION,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """AggreFact's 95% interval: balanced accuracy on ``n_resamples`` subsamples of ``fraction`` of the rows drawn
    without replacement (seeded, in order), then the 2.5th and 97.5th percentiles.

    Examples
    --------
    >>> low, high = subsample_interval(np.array([True, False] * 20), np.array([True, False] * 19 + [False, True]))
    >>> 0.9 < low <= high <= 1.0
    True
    """
    entry: dict = {}
    batch = _SubsampleBatch(n_resamples, seed, fraction)
    batch.add(labels, predictions, entry)
    batch.flush()
    return entry["ci_low"], entry["ci_high"]


class _SubsampleBatch:
    """Defers AggreFact's subsample intervals so that every interval over the same number of rows shares the draws.

    The subsamples depend only on the number of rows (and the seed): every metric's interval on a test set, and
    every test set of the same size, draws the same row indices. They are drawn once per size, one by one and in
    order (the same draws as AggreFact's loop), a block at a time, and each pending interval counts its own labels
    and predictions at those indices: each row's label and prediction as one of four codes, counted per
    subsample by one bincount; then the recall of each class present, as :func:`balanced_accuracy_present`.
    """

    def __init__(self, n_resamples: int, seed: int, fraction: float = SUBSAMPLE_FRACTION):
        self.n_resamples, self.seed, self.fraction = n_resamples, seed, fraction
        self.pending: dict[int, list[tuple[np.ndarray, dict]]] = {}

    def add(self, labels: np.ndarray, predictions: np.ndarray, entry: dict) -> None:
        """``entry["ci_low"]`` and ``entry["ci_high"]`` are set by :meth:`flush` (None without rows to draw)."""
        y, pred = np.asarray(labels, dtype=bool), np.asarray(predictions, dtype=bool)
        entry["ci_low"] = entry["ci_high"] = None
        if int(len(y) * self.fraction) > 0:
            self.pending.setdefault(len(y), []).append((y.astype(np.intp) * 2 + pred, entry))

    def flush(self) -> None:
        for n, jobs in self.pending.items():
            size = int(n * self.fraction)
            rng = np.random.default_rng(self.seed)
            values = np.empty((len(jobs), self.n_resamples))
            block = max(1, _SUBSAMPLE_BLOCK_CELLS // size)
            for start in range(0, self.n_resamples, block):
                stop = min(start + block, self.n_resamples)
                drawn = np.stack([rng.choice(n, size, replace=False) for _ in range(start, stop)])
                offsets = 4 * np.arange(stop - start)[:, None]
                for k, (codes, _) in enumerate(jobs):
                    counts = np.bincount((codes[drawn] + offsets).ravel(), minlength=4 * (stop - start)).reshape(-1, 4)
                    negatives, positives = counts[:, 0] + counts[:, 1], counts[:, 2] + counts[:, 3]
                    with np.errstate(invalid="ignore", divide="ignore"):
                        negative_recall, positive_recall = counts[:, 0] / negatives, counts[:, 3] / positives
                    values[k, start:stop] = np.where(positives == 0, negative_recall,
                                                     np.where(negatives == 0, positive_recall, (negative_recall + positive_recall) / 2))
            for k, (_, entry) in enumerate(jobs):
                low, high = np.percentile(values[k], [2.5, 97.5])
                entry["ci_low"], entry["ci_high"] = clean_float(low), clean_float(high)
        self.pending.clear()


#: Rows of subsamples scored at once by :func:`subsample_interval` (their labels and predictions in memory).
_SUBSAMPLE_BLOCK_CELLS = 250_000


def best_threshold(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """The threshold maximising balanced accuracy of ``score >= threshold`` vs ``labels``; ``None`` if one class.

    Examples
    --------
    >>> best_threshold([0.1, 0.2, 0.7, 0.9], [False, False, True, True])
    0.7
    >>> best_threshold([0.1, 0.2], [True, True]) is None
    True
    """
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

    Examples
    --------
    >>> result = evaluate_threshold(np.array([0.1, 0.6, 0.7, 0.9]), np.array([False, False, True, True]), 0.5)
    >>> result["balanced_accuracy"], result["n"]
    (0.75, 4)
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
    frame: pd.DataFrame, metrics: Sequence[str], *, n_resamples: int = 1000, procedure: str = "aggrefact",
) -> dict | None:
    """Balanced accuracy per metric, by AggreFact's procedure (default) or the platform's (see the module doc).

    ``frame``: one row per summary with ``label`` (bool, consistent), ``split``, ``dataset`` (the corpus),
    ``system``, optionally ``benchmark`` (the source benchmark; one benchmark when absent), and one column per
    metric (higher = more faithful). Returns ``None`` without both a validation and a test summary, else
    ``{M: {"procedure", "per_dataset": {DS: {"threshold", "balanced_accuracy", "ci_low", "ci_high", "n",
    "by_system_category": {CAT: {...}}}}, "single_threshold": {"threshold", "all": {...}, DS: {...}}}}``, and with
    AggreFact's procedure ``"table4"`` (``{DS: {CAT: {"balanced_accuracy", "n", "benchmarks": {B: {...}}}}}``) and
    ``"table5"`` (``{DS: {"threshold", "balanced_accuracy", "ci_low", "ci_high", "n"}}``).

    Examples
    --------
    >>> frame = pd.DataFrame({"split": ["valid"] * 4 + ["test"] * 4, "dataset": "cnndm", "system": "bart",
    ...                       "label": [False, True] * 4, "m": [0.1, 0.9, 0.2, 0.8, 0.3, 0.85, 0.1, 0.95]})
    >>> balanced_accuracy_report(frame, ["m"])["m"]["table4"]["cnndm"]["SOTA"]["balanced_accuracy"]
    1.0
    """
    if procedure not in PROCEDURES:
        raise ValueError(f"procedure: {procedure!r} is not one of {', '.join(PROCEDURES)}")
    if frame.empty or not (frame["split"] == "valid").any() or not (frame["split"] == "test").any():
        return None
    if procedure == "platform":
        return _platform_report(frame, metrics, n_resamples)
    return _aggrefact_report(frame, metrics, n_resamples)


def _aggrefact_cell(valid: pd.DataFrame, test: pd.DataFrame, metric: str, *, batch: _SubsampleBatch | None = None) -> dict | None:
    """Threshold tuned on ``valid``, balanced accuracy on ``test``; with ``batch``, the subsample interval too
    (filled in by ``batch.flush()``)."""
    if test.empty or valid.empty:
        return None
    threshold = aggrefact_threshold(valid[metric], valid["label"])
    y = test["label"].to_numpy(dtype=bool)
    pred = test[metric].to_numpy(dtype=float) > threshold
    cell = {"threshold": threshold, "balanced_accuracy": clean_float(balanced_accuracy_present(y, pred)), "n": len(y),
            "single_class": bool(y.all() or not y.any())}
    if batch is not None:
        batch.add(y, pred, cell)
    return cell


def aggrefact_table4(frame: pd.DataFrame, metric: str) -> dict:
    """Table 4: per corpus and system category, the test-count-weighted mean over benchmarks of the balanced
    accuracy at each benchmark x corpus x category's own validation-tuned threshold."""
    rows = frame[frame[metric].notna()]
    out: dict[str, dict] = {}
    for (dataset, category), cell_rows in rows.groupby(["dataset", "category"], sort=True):
        benchmarks = {}
        for benchmark, sub in cell_rows.groupby("benchmark", sort=True):
            cell = _aggrefact_cell(sub[sub["split"] == "valid"], sub[sub["split"] == "test"], metric)
            if cell is not None:
                benchmarks[str(benchmark)] = cell
        if not benchmarks:
            continue
        counts = np.array([c["n"] for c in benchmarks.values()], dtype=float)
        values = np.array([c["balanced_accuracy"] for c in benchmarks.values()], dtype=float)
        out.setdefault(str(dataset), {})[str(category)] = {
            "balanced_accuracy": clean_float(float((values * counts).sum() / counts.sum())), "n": int(counts.sum()),
            "benchmarks": benchmarks,
        }
    return {ds: {c: cells[c] for c in CATEGORY_ORDER if c in cells} for ds, cells in out.items()}


def aggrefact_table5(frame: pd.DataFrame, metric: str, *, n_resamples: int = 1000, batch: _SubsampleBatch | None = None) -> dict:
    """Table 5: per corpus, one threshold tuned on the SOTA validation summaries, applied to the SOTA test
    summaries, with the 80%-subsample interval (filled in by ``batch.flush()`` when a batch is given)."""
    rows = frame[frame[metric].notna() & (frame["category"] == "SOTA")]
    own = _SubsampleBatch(n_resamples, 0) if batch is None and n_resamples else None
    out = {}
    for dataset, sub in rows.groupby("dataset", sort=True):
        cell = _aggrefact_cell(sub[sub["split"] == "valid"], sub[sub["split"] == "test"], metric, batch=own or batch)
        if cell is not None:
            out[str(dataset)] = cell
    if own is not None:
        own.flush()
    return out


def _aggrefact_report(frame: pd.DataFrame, metrics: Sequence[str], n_resamples: int) -> dict:
    frame = frame.assign(category=frame["system"].map(system_category))
    if "benchmark" not in frame:
        frame = frame.assign(benchmark="all")
    frame = frame.assign(benchmark=frame["benchmark"].fillna("all").astype(str))
    # Every interval of every metric on test sets of one size shares the subsamples drawn for that size.
    batch = _SubsampleBatch(n_resamples, 0)
    out: dict[str, dict] = {}
    for metric in metrics:
        rows = frame[frame[metric].notna()]
        valid, test = rows[rows["split"] == "valid"], rows[rows["split"] == "test"]
        table4 = aggrefact_table4(rows, metric)
        per_dataset = {}
        for dataset, test_ds in test.groupby("dataset", sort=True):
            cell = _aggrefact_cell(valid[valid["dataset"] == dataset], test_ds, metric, batch=batch)
            if cell is not None:
                cell["by_system_category"] = table4.get(str(dataset), {})
            per_dataset[str(dataset)] = cell
        single = None
        if not valid.empty:
            threshold = aggrefact_threshold(valid[metric], valid["label"])
            single = {"threshold": threshold}
            for name, sub in (("all", test), *test.groupby("dataset", sort=True)):
                y = sub["label"].to_numpy(dtype=bool)
                pred = sub[metric].to_numpy(dtype=float) > threshold
                single[str(name)] = {"balanced_accuracy": clean_float(balanced_accuracy_present(y, pred)) if len(y) else None,
                                     "ci_low": None, "ci_high": None, "n": len(y)}
                batch.add(y, pred, single[str(name)])
        out[metric] = {"procedure": "aggrefact", "per_dataset": per_dataset, "single_threshold": single,
                       "table4": table4, "table5": aggrefact_table5(rows, metric, n_resamples=n_resamples, batch=batch)}
    batch.flush()
    return out


def _platform_report(frame: pd.DataFrame, metrics: Sequence[str], n_resamples: int) -> dict:
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
        out[metric] = {"procedure": "platform", "per_dataset": per_dataset, "single_threshold": single}
    batch.flush()
    return out

