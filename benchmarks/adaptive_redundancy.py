"""Adaptive redundancy against a fixed number of workers per item, on simulated FRANK-sized campaigns.

    .venv/bin/python benchmarks/adaptive_redundancy.py --seeds 5

A campaign of 2,246 items (FRANK's summaries: 56% CNN/DM-like with 2-4 sentences, the rest XSum-like with
one) is judged by a pool of 300 simulated workers of varied reliability, under two label-rate profiles:

* ``frank``: 30% of sentences not factual; 75% careful workers (accuracy 0.85-0.97), 20% sloppy
  (0.65-0.80), 5% who say "factual" 80% of the time whatever they read;
* ``qags``: 25% not factual; accuracies Beta(8, 2); a worker who errs says "factual" with their own
  probability in [0.6, 0.95] (QAGS's crowd leaned to "factual").

Policies: ``fixed K=3`` (every item three workers; labels by FRANK's majority and by Dawid–Skene) and
``adaptive`` (every item two workers; then, in rounds, the label model is refitted on all judgements so far
and each item whose least certain sentence has a posterior below the threshold gets one more worker, up to
five: :func:`metrics_service.stats.redundancy.needs_more_workers`, the rule the platform's claims use).
Printed per profile and policy, the median over seeds of: paid judgements (one per worker and item),
sentence-label accuracy against the simulated truth, and the expected calibration error of the posteriors.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics_service.stats.label_aggregation import fit_labels
from metrics_service.stats.redundancy import expected_calibration_error, needs_more_workers

N_ITEMS = 2246
N_WORKERS = 300


def _campaign(profile: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, callable]:
    """(sentence -> item, sentence truth, answer(worker, truths) -> answers)."""
    cnndm = rng.random(N_ITEMS) < 0.56
    sizes = np.where(cnndm, rng.choice([2, 3, 4], N_ITEMS, p=[0.3, 0.5, 0.2]), 1)
    item_of = np.repeat(np.arange(N_ITEMS), sizes)
    if profile == "frank":
        truth = rng.random(len(item_of)) >= 0.30
        kind = rng.choice(3, N_WORKERS, p=[0.75, 0.20, 0.05])
        accuracy = np.where(kind == 0, rng.uniform(0.85, 0.97, N_WORKERS), rng.uniform(0.65, 0.80, N_WORKERS))

        def answer(worker: int, truths: np.ndarray) -> np.ndarray:
            if kind[worker] == 2:
                return rng.random(len(truths)) < 0.8
            return np.where(rng.random(len(truths)) < accuracy[worker], truths, ~truths)
    else:
        truth = rng.random(len(item_of)) >= 0.25
        accuracy, guess_yes = rng.beta(8, 2, N_WORKERS), rng.uniform(0.6, 0.95, N_WORKERS)

        def answer(worker: int, truths: np.ndarray) -> np.ndarray:
            return np.where(rng.random(len(truths)) < accuracy[worker], truths, rng.random(len(truths)) < guess_yes[worker])
    return item_of, truth, answer


def _judge(items: np.ndarray, item_of: np.ndarray, truth: np.ndarray, answer, had: list[set], rows: list, rng) -> None:
    """One more worker (not yet on the item) for each of ``items``."""
    starts = np.searchsorted(item_of, np.arange(N_ITEMS))
    ends = np.searchsorted(item_of, np.arange(N_ITEMS), side="right")
    for item in items:
        worker = int(rng.integers(N_WORKERS))
        while worker in had[item]:
            worker = int(rng.integers(N_WORKERS))
        had[item].add(worker)
        sentences = np.arange(starts[item], ends[item])
        for sentence, label in zip(sentences, answer(worker, truth[sentences]), strict=True):
            rows.append((int(sentence), worker, bool(label)))


MODEL = "dawid_skene"


def _fit(rows: list, method: str | None = None):
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return fit_labels(frame, method or MODEL)


def _score(fitted, truth: np.ndarray) -> tuple[float, float]:
    labels = fitted.labels.sort_index()
    right = labels.to_numpy(dtype=bool) == truth[labels.index.to_numpy()]
    return float(right.mean()), expected_calibration_error(fitted.posterior.sort_index().to_numpy(), right)


def run(profile: str, seed: int, threshold: float, min_workers: int = 2, max_workers: int = 5) -> dict[str, dict]:
    rng = np.random.default_rng(seed)
    item_of, truth, answer = _campaign(profile, rng)
    out = {}
    # Fixed K = 3.
    had, rows = [set() for _ in range(N_ITEMS)], []
    for _ in range(3):
        _judge(np.arange(N_ITEMS), item_of, truth, answer, had, rows, rng)
    fitted = _fit(rows)
    accuracy, ece = _score(fitted, truth)
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    majority = (frame.groupby("task")["label"].mean() >= 0.5).sort_index()
    out["fixed K=3, majority"] = {"judgements": 3 * N_ITEMS, "accuracy": float((majority.to_numpy() == truth[majority.index]).mean()), "ece": float("nan")}
    out[f"fixed K=3, {MODEL}"] = {"judgements": 3 * N_ITEMS, "accuracy": accuracy, "ece": ece}
    # Adaptive.
    had, rows = [set() for _ in range(N_ITEMS)], []
    for _ in range(min_workers):
        _judge(np.arange(N_ITEMS), item_of, truth, answer, had, rows, rng)
    while True:
        fitted = _fit(rows)
        posterior = fitted.posterior.sort_index()
        min_posterior = pd.Series(posterior.to_numpy()).groupby(item_of[posterior.index.to_numpy()]).min().reindex(range(N_ITEMS)).to_numpy()
        more = np.flatnonzero(needs_more_workers(min_posterior, np.array([len(h) for h in had]), min_workers=min_workers,
                                                 max_workers=max_workers, threshold=threshold))
        if not len(more):
            break
        _judge(more, item_of, truth, answer, had, rows, rng)
    accuracy, ece = _score(fitted, truth)
    out[f"adaptive {min_workers}-{max_workers}, p>={threshold}"] = {"judgements": sum(len(h) for h in had), "accuracy": accuracy, "ece": ece}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.95, 0.99])
    parser.add_argument("--model", choices=["dawid_skene", "mace", "glad"], default="dawid_skene", help="label model of the stop rule")
    args = parser.parse_args()
    global MODEL
    MODEL = args.model
    for profile in ("frank", "qags"):
        results: dict[str, list[dict]] = {}
        for seed in range(args.seeds):
            for threshold in args.thresholds:
                for name, figures in run(profile, seed, threshold).items():
                    if name.startswith("fixed") and threshold != args.thresholds[0]:
                        continue
                    results.setdefault(name, []).append(figures)
        print(f"\n{profile}-like labels, {N_ITEMS} items, median of {args.seeds} seeds")
        print(f"{'policy':34s} {'judgements':>10s} {'saved':>6s} {'accuracy':>9s} {'ECE':>6s}")
        base = statistics.median(r["judgements"] for r in results["fixed K=3, majority"])
        for name, runs in results.items():
            paid = statistics.median(r["judgements"] for r in runs)
            accuracy = statistics.median(r["accuracy"] for r in runs)
            ece = statistics.median(r["ece"] for r in runs)
            print(f"{name:34s} {paid:10.0f} {1 - paid / base:6.1%} {accuracy:9.4f} {ece:6.3f}")


if __name__ == "__main__":
    main()
