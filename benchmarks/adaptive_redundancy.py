"""Adaptive redundancy against a fixed number of workers per item, seed by seed, on simulated FRANK-sized
campaigns and on a replay of QAGS's released answers.

    .venv/bin/python benchmarks/adaptive_redundancy.py --seeds 5 --model dawid_skene \\
        --qags ../shared/data/samples/qags_mturk_sample.jsonl

A simulated campaign of 2,246 items (FRANK's summaries: 56% CNN/DM-like with 2-4 sentences, the rest
XSum-like with one) is judged by a pool of 300 simulated workers of unequal reliability, under three profiles:

* ``frank``: 30% of sentences not factual; 75% careful workers (accuracy 0.85-0.97), 20% sloppy
  (0.65-0.80), 5% who say "factual" 80% of the time whatever they read;
* ``qags``: 25% not factual; accuracies Beta(8, 2); a worker who errs says "factual" with their own
  probability in [0.6, 0.95] (QAGS's crowd leaned to "factual");
* ``hard``: as ``frank``, but 20% of the items are hard: on them every worker is right with probability 0.6.

Policies, on the same seed (same campaign, same workers): ``fixed K=3`` labelled by FRANK's majority and by
the label model (``--model``), and ``adaptive`` (every item two workers; then, in rounds, the label model is
refitted on all judgements so far and each item whose least certain sentence has a posterior below the
threshold gets one more worker, up to five: :func:`metrics_service.stats.redundancy.needs_more_workers`, the
rule the platform's claims use). The threshold is chosen on tuning seeds that are never reported: the
cheapest threshold whose accuracy is at or above fixed K=3 with the same label model on every tuning seed
(the highest threshold when none is). Printed per reported seed: paid judgements (one per worker and item)
and sentence-label accuracy against the simulated truth of each policy, the saving, and the paired accuracy
differences against both fixed baselines.

The QAGS replay (``--qags``: QAGS's MTurk JSON lines, three real answers per sentence) draws each item's
answers in their released order (seed 0) or in a per-item random order (other seeds): the adaptive policy
takes the first two workers' answers, then the third where the label model is not yet sure (at the threshold
tuned on the ``qags`` profile); with no truth to score against, it reports agreement with the fixed K=3
labels of the same model and of the majority.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics_service.stats.label_aggregation import fit_labels
from metrics_service.stats.redundancy import needs_more_workers

N_ITEMS = 2246
N_WORKERS = 300
PROFILES = ("frank", "qags", "hard")
HARD_ITEM_SHARE, HARD_ITEM_ACCURACY = 0.20, 0.6
TUNING_SEED_OFFSET = 1000  # tuning seeds are 1000, 1001, ...: never among the reported 0, 1, ...


@dataclass
class Simulated:
    item_of: np.ndarray  # sentence -> item
    truth: np.ndarray  # sentence -> factual
    answer: Callable[[int, np.ndarray], np.ndarray]  # (worker, sentence indices) -> answers


def _campaign(profile: str, rng: np.random.Generator) -> Simulated:
    cnndm = rng.random(N_ITEMS) < 0.56
    sizes = np.where(cnndm, rng.choice([2, 3, 4], N_ITEMS, p=[0.3, 0.5, 0.2]), 1)
    item_of = np.repeat(np.arange(N_ITEMS), sizes)
    if profile in ("frank", "hard"):
        truth = rng.random(len(item_of)) >= 0.30
        kind = rng.choice(3, N_WORKERS, p=[0.75, 0.20, 0.05])
        accuracy = np.where(kind == 0, rng.uniform(0.85, 0.97, N_WORKERS), rng.uniform(0.65, 0.80, N_WORKERS))
        hard = rng.random(N_ITEMS) < (HARD_ITEM_SHARE if profile == "hard" else 0.0)

        def answer(worker: int, sentences: np.ndarray) -> np.ndarray:
            truths = truth[sentences]
            if kind[worker] == 2:
                return rng.random(len(truths)) < 0.8
            right = np.where(hard[item_of[sentences]], HARD_ITEM_ACCURACY, accuracy[worker])
            return np.where(rng.random(len(truths)) < right, truths, ~truths)
    elif profile == "qags":
        truth = rng.random(len(item_of)) >= 0.25
        accuracy, guess_yes = rng.beta(8, 2, N_WORKERS), rng.uniform(0.6, 0.95, N_WORKERS)

        def answer(worker: int, sentences: np.ndarray) -> np.ndarray:
            truths = truth[sentences]
            return np.where(rng.random(len(truths)) < accuracy[worker], truths, rng.random(len(truths)) < guess_yes[worker])
    else:
        raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    return Simulated(item_of, truth, answer)


def _judge(items: np.ndarray, campaign: Simulated, had: list[set], rows: list, rng: np.random.Generator) -> None:
    """One more worker (not yet on the item) for each of ``items``."""
    starts = np.searchsorted(campaign.item_of, np.arange(N_ITEMS))
    ends = np.searchsorted(campaign.item_of, np.arange(N_ITEMS), side="right")
    for item in items:
        worker = int(rng.integers(N_WORKERS))
        while worker in had[item]:
            worker = int(rng.integers(N_WORKERS))
        had[item].add(worker)
        sentences = np.arange(starts[item], ends[item])
        for sentence, label in zip(sentences, campaign.answer(worker, sentences), strict=True):
            rows.append((int(sentence), worker, bool(label)))


def _model_labels(rows: list, method: str) -> tuple[pd.Series, pd.Series]:
    """(label, posterior) per sentence under ``method``, sorted by sentence."""
    fitted = fit_labels(pd.DataFrame(rows, columns=["task", "worker", "label"]), method)
    return fitted.labels.sort_index().astype(bool), fitted.posterior.sort_index()


def _majority_labels(rows: list) -> pd.Series:
    """FRANK's majority per sentence (ties count as factual)."""
    return (pd.DataFrame(rows, columns=["task", "worker", "label"]).groupby("task")["label"].mean() >= 0.5).sort_index()


def _least_certain_per_item(posterior: pd.Series, item_of: np.ndarray, n_items: int) -> np.ndarray:
    return pd.Series(posterior.to_numpy()).groupby(item_of[posterior.index.to_numpy()]).min().reindex(range(n_items)).to_numpy()


def fixed_and_adaptive(profile: str, seed: int, thresholds: list[float], method: str, *, min_workers: int = 2,
                       max_workers: int = 5) -> dict[str, dict]:
    """One seed's campaign under fixed K=3 (majority and ``method`` labels) and adaptive redundancy at each threshold.

    Returns ``{policy: {"judgements", "accuracy"}}``; adaptive policies are keyed ``adaptive@<threshold>``."""
    rng = np.random.default_rng(seed)
    campaign = _campaign(profile, rng)
    truth = campaign.truth

    def accuracy(labels: pd.Series) -> float:
        return float((labels.to_numpy() == truth[labels.index.to_numpy()]).mean())

    had, rows = [set() for _ in range(N_ITEMS)], []
    for _ in range(3):
        _judge(np.arange(N_ITEMS), campaign, had, rows, rng)
    out = {
        "fixed K=3, majority": {"judgements": 3 * N_ITEMS, "accuracy": accuracy(_majority_labels(rows))},
        f"fixed K=3, {method}": {"judgements": 3 * N_ITEMS, "accuracy": accuracy(_model_labels(rows, method)[0])},
    }
    for threshold in thresholds:
        had, rows = [set() for _ in range(N_ITEMS)], []
        for _ in range(min_workers):
            _judge(np.arange(N_ITEMS), campaign, had, rows, rng)
        while True:
            labels, posterior = _model_labels(rows, method)
            more = np.flatnonzero(needs_more_workers(
                _least_certain_per_item(posterior, campaign.item_of, N_ITEMS), np.array([len(h) for h in had]),
                min_workers=min_workers, max_workers=max_workers, threshold=threshold))
            if not len(more):
                break
            _judge(more, campaign, had, rows, rng)
        out[f"adaptive@{threshold}"] = {"judgements": sum(len(h) for h in had), "accuracy": accuracy(labels)}
    return out


def choose_threshold(runs: list[dict[str, dict]], thresholds: list[float], method: str) -> float:
    """The cheapest threshold (median judgements over the runs) whose accuracy is at or above fixed K=3 with the
    same label model on every run; the highest threshold when none is.

    Examples:
        >>> runs = [{"fixed K=3, m": {"accuracy": 0.9}, "adaptive@0.8": {"accuracy": 0.89, "judgements": 5},
        ...          "adaptive@0.9": {"accuracy": 0.91, "judgements": 6}, "adaptive@0.95": {"accuracy": 0.92, "judgements": 7}}]
        >>> choose_threshold(runs, [0.8, 0.9, 0.95], "m")
        0.9
    """
    fine = [t for t in thresholds if all(r[f"adaptive@{t}"]["accuracy"] >= r[f"fixed K=3, {method}"]["accuracy"] for r in runs)]
    if not fine:
        return max(thresholds)
    return min(fine, key=lambda t: (statistics.median(r[f"adaptive@{t}"]["judgements"] for r in runs), t))


# ---------------------------------------------------------------------------------------------- QAGS replay


def read_qags(path: Path) -> list[list[list[tuple[str, bool]]]]:
    """Per item (one summary), per sentence, the released ``(worker id, factual)`` answers in file order."""
    items = []
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            items.append([[(str(r["worker_id"]), str(r["response"]).strip().lower() == "yes") for r in s["responses"]]
                          for s in record["summary_sentences"]])
    return items


def qags_replay(items: list[list[list[tuple[str, bool]]]], seed: int, threshold: float, method: str, *,
                min_workers: int = 2) -> dict[str, float]:
    """Adaptive redundancy replayed on released answers: slot ``j`` of an item is the ``j``-th answer of each of
    its sentences (released order for seed 0, a per-item random order otherwise). Agreement of the adaptive
    labels with fixed K (every released answer) labelled by ``method`` and by the majority."""
    rng = np.random.default_rng(seed)
    slots = min(len(answers) for item in items for answers in item)
    order = [np.arange(slots) if seed == 0 else rng.permutation(slots) for _ in items]
    sentence_item = np.array([i for i, item in enumerate(items) for _ in item])
    answers_by_sentence = [answers for item in items for answers in item]

    def rows_for(taken: np.ndarray) -> list:
        rows = []
        for sentence, answers in enumerate(answers_by_sentence):
            item = sentence_item[sentence]
            for slot in order[item][: taken[item]]:
                worker, label = answers[slot]
                rows.append((sentence, worker, label))
        return rows

    everything = rows_for(np.full(len(items), slots))
    fixed_model, fixed_majority = _model_labels(everything, method)[0], _majority_labels(everything)
    taken = np.full(len(items), min_workers)
    while True:
        labels, posterior = _model_labels(rows_for(taken), method)
        more = needs_more_workers(_least_certain_per_item(posterior, sentence_item, len(items)), taken,
                                  min_workers=min_workers, max_workers=slots, threshold=threshold)
        if not more.any():
            break
        taken = taken + more
    return {
        "judgements": int(taken.sum()), "fixed_judgements": slots * len(items), "sentences": len(answers_by_sentence),
        "agreement_model": float((labels.to_numpy() == fixed_model.to_numpy()).mean()),
        "agreement_majority": float((labels.to_numpy() == fixed_majority.to_numpy()).mean()),
    }


# ---------------------------------------------------------------------------------------------- output


def _print_paired(profile: str, method: str, threshold: float, runs: dict[int, dict[str, dict]]) -> None:
    adaptive, model, majority = f"adaptive@{threshold}", f"fixed K=3, {method}", "fixed K=3, majority"
    print(f"\n{profile}-like, {N_ITEMS} items, label model {method}, threshold {threshold} (chosen on seeds "
          f"{TUNING_SEED_OFFSET}+, never reported)")
    print(f"{'seed':>4s} {'K=3 maj acc':>11s} {'K=3 model acc':>13s} {'adaptive judg':>13s} {'saved':>6s} "
          f"{'adaptive acc':>12s} {'vs model':>9s} {'vs maj':>8s}")
    saved, versus_model, versus_majority = [], [], []
    for seed, run in sorted(runs.items()):
        fixed = run[model]["judgements"]
        saving = 1 - run[adaptive]["judgements"] / fixed
        d_model = run[adaptive]["accuracy"] - run[model]["accuracy"]
        d_majority = run[adaptive]["accuracy"] - run[majority]["accuracy"]
        saved.append(saving)
        versus_model.append(d_model)
        versus_majority.append(d_majority)
        print(f"{seed:4d} {run[majority]['accuracy']:11.4f} {run[model]['accuracy']:13.4f} {run[adaptive]['judgements']:13d} "
              f"{saving:6.1%} {run[adaptive]['accuracy']:12.4f} {d_model:+9.4f} {d_majority:+8.4f}")
    n = len(runs)
    print(f"paired: saved {min(saved):.1%} to {max(saved):.1%}; accuracy at or above K=3 {method} on "
          f"{sum(d >= 0 for d in versus_model)}/{n} seeds, at or above K=3 majority on {sum(d >= 0 for d in versus_majority)}/{n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="reported seeds 0 .. N-1")
    parser.add_argument("--tuning-seeds", type=int, default=3, help="seeds the threshold is chosen on (never reported)")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.7, 0.8, 0.9, 0.95, 0.99])
    parser.add_argument("--model", choices=["dawid_skene", "mace", "glad"], default="dawid_skene", help="label model of the stop rule")
    parser.add_argument("--profiles", nargs="+", choices=PROFILES, default=list(PROFILES))
    parser.add_argument("--qags", type=Path, help="QAGS MTurk JSON lines to replay (three answers per sentence)")
    args = parser.parse_args()
    chosen: dict[str, float] = {}
    for profile in args.profiles:
        tuning = [fixed_and_adaptive(profile, TUNING_SEED_OFFSET + s, args.thresholds, args.model) for s in range(args.tuning_seeds)]
        chosen[profile] = choose_threshold(tuning, args.thresholds, args.model)
        runs = {seed: fixed_and_adaptive(profile, seed, [chosen[profile]], args.model) for seed in range(args.seeds)}
        _print_paired(profile, args.model, chosen[profile], runs)
    if args.qags:
        items = read_qags(args.qags)
        threshold = chosen.get("qags", max(args.thresholds))
        print(f"\nQAGS replay of {args.qags.name}: {len(items)} summaries, label model {args.model}, threshold {threshold} "
              "(the qags profile's); seed 0 = released answer order")
        print(f"{'seed':>4s} {'sentences':>9s} {'K=3 judg':>8s} {'adaptive judg':>13s} {'saved':>6s} {'agree model':>11s} {'agree maj':>9s}")
        for seed in range(args.seeds):
            r = qags_replay(items, seed, threshold, args.model)
            print(f"{seed:4d} {r['sentences']:9d} {r['fixed_judgements']:8d} {r['judgements']:13d} "
                  f"{1 - r['judgements'] / r['fixed_judgements']:6.1%} {r['agreement_model']:11.4f} {r['agreement_majority']:9.4f}")


if __name__ == "__main__":
    main()
