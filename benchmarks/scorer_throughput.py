"""Per-metric scoring throughput (summaries per second) on FRANK summaries, CPU or CUDA.

Reads ``--n`` annotated FRANK summaries with their articles and references straight from the FRANK
folder (no database) and scores them with each metric in ``--metrics`` as one scoring chunk does. A
metric that cannot run here (no local weights or data) is reported with the reason, not measured.
Model metrics on CPU run on every core the process is given (``metrics_service.scorers.hf.use_worker_cores``);
the baseline in the same run is the same metric on one thread (``--baseline-threads 1``). ROUGE's baseline is
``rouge-score``'s own scorer used directly (every token stemmed each time, one scorer for the reference outputs
and the article's bigram precision alike), whose scores the platform's must equal.

Usage::

    .venv/bin/python benchmarks/scorer_throughput.py --n 200 --metrics rouge bleu meteor bertscore
    .venv/bin/python benchmarks/scorer_throughput.py --device cuda --metrics bertscore   # on a GPU machine
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._bench_common import default_frank_dir
from metrics_service.scorers import ScorerError, get_scorer, scorer_class


def frank_pairs(folder: Path, n: int) -> tuple[list[str], list[str], list[str]]:
    documents, summaries, references = [], [], []
    for record in json.loads((folder / "human_annotations.json").read_text()):
        article = json.loads((folder / "articles" / f"{record['hash']}.json").read_text())
        lines = article.get(f"{record['model_name']}_lines")
        reference = article.get("bart_reference") or article.get("reference") or ""
        if not lines or not reference.strip():
            continue
        documents.append(article["article"])
        summaries.append(" ".join(line.strip() for line in lines))
        references.append(reference)
        if len(documents) == n:
            break
    return documents, summaries, references


def run(name: str, device: str | None, data: tuple[list[str], list[str], list[str]]) -> float:
    kwargs = {"device": device} if device and scorer_class(name).uses_model else {}
    scorer = get_scorer(name, **kwargs)
    documents, summaries, references = data
    scorer.score(documents[:2], summaries[:2], references=references[:2])  # load weights outside the timing
    started = time.perf_counter()
    scorer.score(documents, summaries, references=references)
    return len(summaries) / (time.perf_counter() - started)


def rouge_baseline(rate: float, data: tuple[list[str], list[str], list[str]]) -> str:
    """The package's scorer as used directly, on the same summaries: its rate, and whether every score is equal."""
    from rouge_score.rouge_scorer import RougeScorer

    documents, summaries, references = data
    direct = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    started = time.perf_counter()
    expected: dict[str, list[float]] = {"rouge1": [], "rouge2": [], "rougeL": [], "rouge2_precision_article": []}
    for document, summary, reference in zip(documents, summaries, references):
        scores = direct.score(reference, summary)
        for key in ("rouge1", "rouge2", "rougeL"):
            expected[key].append(float(scores[key].fmeasure))
        expected["rouge2_precision_article"].append(float(direct.score(document, summary)["rouge2"].precision))
    base = len(summaries) / (time.perf_counter() - started)
    same = get_scorer("rouge").score(documents, summaries, references=references) == expected
    return f"  (rouge-score directly: {base:.1f}/s: {rate / base:.2f}x; scores {'identical' if same else 'DIFFERENT'})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frank-data", type=Path, default=default_frank_dir())
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--metrics", nargs="+", default=["rouge", "bleu", "meteor", "bertscore"])
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when visible)")
    parser.add_argument("--baseline-threads", type=int, default=1, help="torch threads of the baseline run of model metrics")
    args = parser.parse_args()
    data = frank_pairs(args.frank_data, args.n)
    print(f"{len(data[1])} FRANK summaries (articles and references included)")
    for name in args.metrics:
        try:
            rate = run(name, args.device, data)
        except ScorerError as exc:
            print(f"{name:<10} not measured here: {exc}")
            continue
        line = f"{name:<10} {rate:8.1f} summaries/s"
        if name == "rouge":
            line += rouge_baseline(rate, data)
        if scorer_class(name).uses_model and (args.device or "cpu") == "cpu":
            import torch

            cores = torch.get_num_threads()
            torch.set_num_threads(args.baseline_threads)
            try:
                # OMP_NUM_THREADS set: use_worker_cores leaves the count alone for the baseline.
                import os

                os.environ["OMP_NUM_THREADS"] = str(args.baseline_threads)
                base = run(name, "cpu", data)
            finally:
                os.environ.pop("OMP_NUM_THREADS", None)
                torch.set_num_threads(cores)
            line += f"  ({cores} threads; {base:.1f}/s on {args.baseline_threads}: {rate / base:.2f}x)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
