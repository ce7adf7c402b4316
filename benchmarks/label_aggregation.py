"""Dawid–Skene, MACE and GLAD: FactLab's numpy fits (metrics_service.stats.label_aggregation) against crowd-kit's.

    .venv/bin/python benchmarks/label_aggregation.py --tasks 3000 --workers 40

Simulated labels (three classes, three workers per task, worker accuracies uniform in [0.4, 0.95]); prints
the time of each implementation, their ratio, the share of tasks where the two label the same, and how
well each reliability estimate tracks the simulated accuracy (Pearson r).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics_service.stats.label_aggregation import _fit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=40)
    args = parser.parse_args()
    import crowdkit.aggregation as ck

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
