"""Time of the report's AggreFact-lens statistics at FRANK's size (pure statistics, no database).

    .venv/bin/python benchmarks/aggrefact_sections.py [--rows 2246] [--metrics 15 30] [--repeat 3]

Synthetic data: human factuality in [0, 1] for 9 systems x 2 datasets, metrics = factuality + seeded noise
of growing size, FRANK-like category columns. Prints the best of ``--repeat`` runs (seconds) of each new
section: the paired bootstrap difference matrix (every metric pair, 1000 resamples), Holm over the
Williams matrix, system-level correlation, Kendall in the correlation section (one call per metric), and
the unified taxonomy distribution.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import pandas as pd

from metrics_service.stats import unified_taxonomy
from metrics_service.stats.correlation import correlation, williams_matrix
from metrics_service.stats.significance import bootstrap_difference_matrix, holm_matrix, system_level_correlation

SYSTEMS = ["bart", "bert_sum", "bus", "pgn", "s2s", "BERTS2S", "PtGen", "TConvS2S", "TranS2S"]


def frame(rows: int, metrics: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    data = pd.DataFrame({
        "system": rng.choice(SYSTEMS, rows), "dataset": rng.choice(["cnndm", "xsum"], rows),
        "Factuality": rng.choice([0.0, 0.5, 1.0], rows, p=[0.4, 0.2, 0.4]),
    })
    data["group"] = data["system"] + "|" + data["dataset"]
    for code in ("EntE", "RelE", "CircE", "OutE", "CorefE", "LinkE", "GramE", "OtherE"):
        data[code] = np.where(data["Factuality"] < 1, rng.choice([1.0, 0.5, 0.0], rows, p=[0.7, 0.2, 0.1]), 1.0)
    for m in range(metrics):
        data[f"m{m}"] = data["Factuality"] + rng.normal(0, 0.2 + 0.1 * m, rows)
    return data


def best(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2246)
    parser.add_argument("--metrics", type=int, nargs="+", default=[15, 30])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for n_metrics in args.metrics:
        data = frame(args.rows, n_metrics)
        metrics = [f"m{m}" for m in range(n_metrics)]
        williams = williams_matrix(data, "Factuality", metrics)
        timings = {
            "bootstrap difference matrix": best(lambda: bootstrap_difference_matrix(data, "Factuality", metrics), args.repeat),
            "Holm over Williams": best(lambda: holm_matrix(williams), args.repeat),
            "system-level correlation": best(lambda: system_level_correlation(data, "Factuality", metrics, by=("system", "dataset")), args.repeat),
            "Kendall (partial), all metrics": best(
                lambda: [correlation(data["Factuality"], data[m], data["group"], kendall=True, with_spearman=False) for m in metrics], args.repeat),
            "unified taxonomy distribution": best(
                lambda: unified_taxonomy.type_distribution(unified_taxonomy.unified_frame(data).assign(dataset=data["dataset"]), "dataset"), args.repeat),
        }
        pairs = n_metrics * (n_metrics - 1) // 2
        print(f"{args.rows} rows, {n_metrics} metrics ({pairs} pairs), best of {args.repeat}:")
        for name, seconds in timings.items():
            print(f"  {name:34s} {seconds:8.3f} s")


if __name__ == "__main__":
    main()
