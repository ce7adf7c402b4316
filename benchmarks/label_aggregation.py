"""Dawid–Skene, MACE and GLAD: FactLab's numpy fits (metrics_service.stats.label_aggregation) against
crowd-kit's, and the coverage of every label model's 95% intervals on simulated crowds with known truth.

    .venv/bin/python benchmarks/label_aggregation.py --tasks 3000 --workers 40 --coverage-seeds 5

Against crowd-kit: simulated labels (three classes, three workers per task, worker accuracies uniform in
[0.4, 0.95]); prints the time of each implementation, their ratio, the share of tasks where the two label
the same, and how well each reliability estimate tracks the simulated accuracy (Pearson r).

Coverage: QAGS-sized campaigns (474 summaries, 56% with 2-4 sentences, the rest one; 25% of sentences not
factual; three workers per summary from a pool of 100 whose accuracies are Beta(8, 2) and who, when wrong,
say "factual" with their own probability in [0.6, 0.95]), one per seed. For each label model
(``metrics_service.stats.label_aggregation.aggregate``): the share of summaries whose true Factuality (share
of truly factual sentences) lies in the 95% interval ``Factuality_low, Factuality_high``, its median width;
and, per sentence, the share whose interval ``posterior_low, posterior_high`` (worker-aware) holds the
probability an ideal observer, who knows every simulated worker's accuracy and guessing rate and the base
rate, gives the label of being right, beside the count-only Jeffreys interval of the same posterior and the
fixed [0.5, 1], with their median intervals; then the worker-aware interval's coverage of the accuracy of the
labels whose posterior falls in the same twentieth of [0, 1] (a coarse target: a bin mixes labels of unlike
evidence), and the label accuracy beside the mean posterior (calibration).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics_service.stats.label_aggregation import (
    METHODS,
    _fit,
    aggregate,
    posterior_interval,
    summary_uncertainty,
)
from metrics_service.stats.redundancy import interval_coverage

QAGS_SUMMARIES, QAGS_WORKERS, WORKERS_PER_SUMMARY = 474, 100, 3


FACTUAL_SHARE = 0.75


def true_posterior_factual(judgements: pd.DataFrame, accuracy: np.ndarray, guess_yes: np.ndarray) -> pd.Series:
    """P(factual | the sentence's judgements) under the simulation's own worker parameters and base rate: the
    probability an ideal observer who knew every worker would give, per ``(summary_id, sentence_index)``."""
    worker = judgements["worker_id"].to_numpy()
    says_yes = judgements["factual"].to_numpy(dtype=bool)
    p_yes_if_factual = accuracy[worker] + (1 - accuracy[worker]) * guess_yes[worker]
    p_yes_if_not = (1 - accuracy[worker]) * guess_yes[worker]
    log_ratio = np.where(says_yes, np.log(p_yes_if_factual / p_yes_if_not), np.log((1 - p_yes_if_factual) / (1 - p_yes_if_not)))
    summed = pd.Series(log_ratio).groupby([judgements["summary_id"].to_numpy(), judgements["sentence_index"].to_numpy()]).sum()
    return 1 / (1 + np.exp(-(np.log(FACTUAL_SHARE / (1 - FACTUAL_SHARE)) + summed)))


def simulated_qags_crowd(seed: int) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """(judgements with ``summary_id, sentence_index, worker_id, factual, categories``, true factual label per
    ``(summary_id, sentence_index)``, :func:`true_posterior_factual`) of one simulated QAGS-sized campaign."""
    rng = np.random.default_rng(seed)
    accuracy, guess_yes = rng.beta(8, 2, QAGS_WORKERS), rng.uniform(0.6, 0.95, QAGS_WORKERS)
    rows, truth = [], {}
    for summary in range(QAGS_SUMMARIES):
        n_sentences = int(rng.choice([2, 3, 4], p=[0.3, 0.5, 0.2])) if rng.random() < 0.56 else 1
        factual = rng.random(n_sentences) >= 1 - FACTUAL_SHARE
        truth.update({(summary, index): bool(f) for index, f in enumerate(factual)})
        for worker in rng.choice(QAGS_WORKERS, WORKERS_PER_SUMMARY, replace=False):
            right = rng.random(n_sentences) < accuracy[worker]
            answers = np.where(right, factual, rng.random(n_sentences) < guess_yes[worker])
            rows += [(summary, index, int(worker), bool(a), [] if a else ["OtherE"]) for index, a in enumerate(answers)]
    judgements = pd.DataFrame(rows, columns=["summary_id", "sentence_index", "worker_id", "factual", "categories"])
    return judgements, pd.Series(truth), true_posterior_factual(judgements, accuracy, guess_yes)


def coverage(seeds: int) -> None:
    print(f"\nCoverage of 95% intervals, {seeds} simulated QAGS-sized campaigns ({QAGS_SUMMARIES} summaries, "
          f"{WORKERS_PER_SUMMARY} workers each), pooled over seeds (per-seed range in brackets)")
    print("Sentence intervals against the ideal observer's probability that the label is right (it knows every worker's "
          "simulated parameters): the platform's worker-aware interval, the count-only Jeffreys interval of the same "
          "posterior, and the fixed [0.5, 1]; then against the accuracy of labels of like posterior (twentieths).")
    print(f"{'model':12s} {'summary cov':>22s} {'width':>6s} {'worker-aware cov':>22s} {'median':>12s} {'Jeffreys cov':>12s} "
          f"{'median':>12s} {'[0.5,1]':>7s} {'cov vs bins':>11s} {'accuracy':>8s} {'mean post':>9s}")
    crowds = [simulated_qags_crowd(seed) for seed in range(seeds)]
    for method in METHODS:
        summary_cov, aware_cov, jeffreys_cov, fixed_cov, bins_cov, widths = [], [], [], [], [], []
        lows, highs, j_lows, j_highs, right_all, posteriors = [], [], [], [], [], []
        for judgements, truth, ideal in crowds:
            units = aggregate(judgements, method).units
            keys = list(zip(units["summary_id"], units["sentence_index"], strict=True))
            true_label = np.array([truth[k] for k in keys])
            label = units["factual"].astype(bool).to_numpy()
            right = (label == true_label).astype(float)
            ideal_factual = ideal.reindex(pd.MultiIndex.from_tuples(keys)).to_numpy()
            ideal_right = np.where(label, ideal_factual, 1.0 - ideal_factual)
            j_low, j_high = posterior_interval(units["posterior"].to_numpy(dtype=float), units["n"].to_numpy(dtype=float))
            aware_cov.append(interval_coverage(units["posterior_low"], units["posterior_high"], ideal_right))
            jeffreys_cov.append(interval_coverage(j_low, j_high, ideal_right))
            fixed_cov.append(interval_coverage(np.full(len(right), 0.5), np.ones(len(right)), ideal_right))
            # The probability a label is right, estimated from the labels of like posterior (twentieths of [0, 1]).
            bins = np.minimum((units["posterior"].to_numpy(dtype=float) * 20).astype(int), 19)
            right_probability = pd.Series(right).groupby(bins).transform("mean").to_numpy()
            bins_cov.append(interval_coverage(units["posterior_low"], units["posterior_high"], right_probability))
            lows += list(units["posterior_low"])
            highs += list(units["posterior_high"])
            j_lows += list(j_low)
            j_highs += list(j_high)
            right_all += list(right)
            posteriors += list(units["posterior"])
            summaries = summary_uncertainty(units)
            true_share = pd.Series(true_label.astype(float)).groupby(units["summary_id"].to_numpy()).mean().reindex(summaries.index)
            summary_cov.append(interval_coverage(summaries["Factuality_low"], summaries["Factuality_high"], true_share))
            widths += list(summaries["Factuality_high"] - summaries["Factuality_low"])

        def pooled(values: list[float]) -> str:
            return f"{np.mean(values):.3f} [{min(values):.3f}-{max(values):.3f}]"

        def median_interval(low: list[float], high: list[float]) -> str:
            return f"[{np.median(low):.2f}, {np.median(high):.2f}]"

        print(f"{method:12s} {pooled(summary_cov):>22s} {np.median(widths):6.3f} {pooled(aware_cov):>22s} {median_interval(lows, highs):>12s} "
              f"{np.mean(jeffreys_cov):12.3f} {median_interval(j_lows, j_highs):>12s} {np.mean(fixed_cov):7.3f} {np.mean(bins_cov):11.3f} "
              f"{np.mean(right_all):8.4f} {np.mean(posteriors):9.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=40)
    parser.add_argument("--coverage-seeds", type=int, default=5, help="simulated campaigns for the interval coverage (0: none)")
    parser.add_argument("--coverage-only", action="store_true", help="skip the comparison with crowd-kit")
    args = parser.parse_args()
    if not args.coverage_only:
        against_crowd_kit(args.tasks, args.workers)
    if args.coverage_seeds:
        coverage(args.coverage_seeds)


def against_crowd_kit(n_tasks: int, n_workers: int) -> None:
    import crowdkit.aggregation as ck

    args = argparse.Namespace(tasks=n_tasks, workers=n_workers)

    rng = np.random.default_rng(0)
    accuracy = rng.uniform(0.4, 0.95, args.workers)
    rows = []
    for task in range(args.tasks):
        truth = rng.choice(["a", "b", "c"], p=[0.5, 0.3, 0.2])
        for worker in rng.choice(args.workers, 3, replace=False):
            label = truth if rng.random() < accuracy[worker] else rng.choice(["a", "b", "c"])
            rows.append((f"t{task}", f"w{worker:04d}", label))
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    print(f"{len(frame)} judgements, {args.tasks} tasks, {args.workers} workers")
    references = {
        "dawid_skene": lambda: ck.DawidSkene(n_iter=100, tol=1e-5).fit(frame),
        # crowd-kit's MACE depends on row order unless workers and labels first appear in sorted order.
        "mace": lambda: ck.MACE(n_restarts=10, n_iter=50, random_state=0).fit(frame.sort_values(["worker", "label"], kind="mergesort")),
        "glad": lambda: ck.GLAD().fit(frame),
    }
    for method, reference in references.items():
        start = time.perf_counter()
        labels, reliability = _fit(frame, method)
        ours = time.perf_counter() - start
        start = time.perf_counter()
        model = reference()
        theirs = time.perf_counter() - start
        same = float((labels.sort_index() == model.labels_.sort_index()).mean())
        r = float(np.corrcoef(reliability.sort_index().to_numpy(), accuracy)[0, 1])
        print(f"{method:12s} factlab {ours:6.2f} s  crowd-kit {theirs:6.2f} s  ({theirs / ours:5.1f}x)  same labels {same:.4f}  r(reliability, accuracy) {r:.3f}")


if __name__ == "__main__":
    main()
