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
and, per sentence, the share whose interval ``posterior_low, posterior_high`` holds the probability that its
label is right, read as the accuracy of the labels whose posterior falls in the same twentieth of [0, 1]
(a 0/1 outcome is never inside a Jeffreys interval that stops short of 1), beside what the fixed interval
[0.5, 1] achieves (an interval that knows nothing of the workers), and the label accuracy beside the mean
posterior (calibration).
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
    summary_uncertainty,
)
from metrics_service.stats.redundancy import interval_coverage

QAGS_SUMMARIES, QAGS_WORKERS, WORKERS_PER_SUMMARY = 474, 100, 3


def simulated_qags_crowd(seed: int) -> tuple[pd.DataFrame, pd.Series]:
    """(judgements with ``summary_id, sentence_index, worker_id, factual, categories``, true factual label per
    ``(summary_id, sentence_index)``) of one simulated QAGS-sized campaign."""
    rng = np.random.default_rng(seed)
    accuracy, guess_yes = rng.beta(8, 2, QAGS_WORKERS), rng.uniform(0.6, 0.95, QAGS_WORKERS)
    rows, truth = [], {}
    for summary in range(QAGS_SUMMARIES):
        n_sentences = int(rng.choice([2, 3, 4], p=[0.3, 0.5, 0.2])) if rng.random() < 0.56 else 1
        factual = rng.random(n_sentences) >= 0.25
        truth.update({(summary, index): bool(f) for index, f in enumerate(factual)})
        for worker in rng.choice(QAGS_WORKERS, WORKERS_PER_SUMMARY, replace=False):
            right = rng.random(n_sentences) < accuracy[worker]
            answers = np.where(right, factual, rng.random(n_sentences) < guess_yes[worker])
            rows += [(summary, index, int(worker), bool(a), [] if a else ["OtherE"]) for index, a in enumerate(answers)]
    judgements = pd.DataFrame(rows, columns=["summary_id", "sentence_index", "worker_id", "factual", "categories"])
    return judgements, pd.Series(truth)


def coverage(seeds: int) -> None:
    print(f"\nCoverage of 95% intervals, {seeds} simulated QAGS-sized campaigns ({QAGS_SUMMARIES} summaries, "
          f"{WORKERS_PER_SUMMARY} workers each), pooled over seeds (per-seed range in brackets)")
    print(f"{'model':12s} {'summary cov':>22s} {'median width':>12s} {'sentence cov':>22s} {'[0.5,1] cov':>11s} "
          f"{'median sentence interval':>24s} {'accuracy':>8s} {'mean post':>9s}")
    crowds = [simulated_qags_crowd(seed) for seed in range(seeds)]
    for method in METHODS:
        summary_cov, sentence_cov, fixed_cov, widths, lows, highs, right_all, posteriors = [], [], [], [], [], [], [], []
        for judgements, truth in crowds:
            units = aggregate(judgements, method).units
            true_label = np.array([truth[(s, i)] for s, i in zip(units["summary_id"], units["sentence_index"], strict=True)])
            right = (units["factual"].astype(bool).to_numpy() == true_label).astype(float)
            # The probability a label is right, estimated from the labels of like posterior (twentieths of [0, 1]).
            bins = np.minimum((units["posterior"].to_numpy(dtype=float) * 20).astype(int), 19)
            right_probability = pd.Series(right).groupby(bins).transform("mean").to_numpy()
            sentence_cov.append(interval_coverage(units["posterior_low"], units["posterior_high"], right_probability))
            fixed_cov.append(interval_coverage(np.full(len(right), 0.5), np.ones(len(right)), right_probability))
            lows += list(units["posterior_low"])
            highs += list(units["posterior_high"])
            right_all += list(right)
            posteriors += list(units["posterior"])
            summaries = summary_uncertainty(units)
            true_share = pd.Series(true_label.astype(float)).groupby(units["summary_id"].to_numpy()).mean().reindex(summaries.index)
            summary_cov.append(interval_coverage(summaries["Factuality_low"], summaries["Factuality_high"], true_share))
            widths += list(summaries["Factuality_high"] - summaries["Factuality_low"])

        def pooled(values: list[float]) -> str:
            return f"{np.mean(values):.3f} [{min(values):.3f}-{max(values):.3f}]"

        print(f"{method:12s} {pooled(summary_cov):>22s} {np.median(widths):12.3f} {pooled(sentence_cov):>22s} "
              f"{np.mean(fixed_cov):11.3f} {f'[{np.median(lows):.2f}, {np.median(highs):.2f}]':>24s} "
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
