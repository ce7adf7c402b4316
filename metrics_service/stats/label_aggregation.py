"""Aggregation of crowd labels beyond the majority vote: Dawid–Skene and MACE.

Plain Python (numpy, pandas; no Django). Dawid–Skene and MACE are small vectorised EM loops here rather
than ``crowd-kit``'s (which the tests use as the reference): crowd-kit's MACE takes about 4 s per restart
on 9,000 judgements, and a report needs two fits per method plus one per FRANK ablation. A *task* is one summary sentence ``(summary_id,
sentence_index)``; the input is the judgement table of :mod:`.agreement` (``summary_id, sentence_index,
worker_id, factual, categories``), one row per worker and sentence. Methods:

* ``majority`` (the default, FRANK's rule): factual when at least half of the annotators say so; the
  error categories of a non-factual sentence are its modal codes (:func:`.factuality.sentence_majority`).
  A worker's reliability is the share of their answers equal to the majority label.
* ``dawid_skene``: Dawid & Skene (1979), EM with one full confusion matrix per worker
  (:func:`dawid_skene`, at most 100 iterations, tolerance 1e-5). A worker's reliability is
  their estimated accuracy, the sum over classes k of prior(k) x P(answer k | true class k).
* ``mace``: MACE (Hovy et al., 2013; :func:`mace`, EM with smoothing 0.01 / labels, 10 restarts x 50
  iterations, seed 0). A worker's reliability is their competence: the posterior probability that they
  are not answering at random ("spamming").

Factual labels are aggregated as a yes/no label. Error categories are aggregated as one label per
worker and sentence, the worker's set of codes (``NoE`` when they said factual), by the same method;
a sentence that the factual aggregation finds non-factual takes the codes of its aggregated set, or its
modal codes (FRANK's rule) when that set is ``NoE``, so a non-factual sentence never loses its
categories, and a factual one has none. Inputs are sorted by (summary, sentence, worker) before fitting,
so identical data give identical results whatever the row order.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from annotate.frank.typology import CODES, GROUPS, normalize_code

from .factuality import (
    NO_ERROR,
    UNIT,
    _summary_scores,
    sentence_majority,
    summary_human_scores,
)

METHODS = ("majority", "dawid_skene", "mace")
DEFAULT_METHOD = "majority"
_SEP = "+"


def check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown label aggregation {method!r}; expected one of {', '.join(METHODS)}")
    return method


def _sorted(judgements: pd.DataFrame) -> pd.DataFrame:
    return judgements.sort_values([*UNIT, "worker_id"], kind="mergesort").reset_index(drop=True)


def _code_label(factual: bool, categories: Iterable[str] | None) -> str:
    if factual:
        return NO_ERROR
    codes = {normalize_code(c) for c in (categories or [])}
    return _SEP.join(c for c in CODES if c in codes) or "unspecified"


def _encode(tasks: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, list, list]:
    """Integer codes of task, worker and label (each in sorted order, hence independent of row order)."""
    task_names, t = np.unique(tasks["task"].to_numpy(), return_inverse=True)
    worker_names, w = np.unique(tasks["worker"].to_numpy(), return_inverse=True)
    label_names, a = np.unique(tasks["label"].to_numpy(), return_inverse=True)
    return t, w, a, list(task_names), list(worker_names), list(label_names)


def dawid_skene(t: np.ndarray, w: np.ndarray, a: np.ndarray, n_tasks: int, n_workers: int, n_labels: int,
                *, n_iter: int = 100, tol: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dawid & Skene (1979) by EM: ``(posteriors [task, class], confusion [worker, true, answer], priors)``.

    Start from each task's vote shares; M-step: class priors = mean posterior, worker confusion rows =
    posterior-weighted answer counts (normalised, a 1e-10 floor keeping logs finite); E-step: posterior of
    class k proportional to prior(k) x product over the task's answers of confusion[worker, k, answer]. Stops
    when no posterior moves by more than ``tol`` or after ``n_iter`` rounds (the settings of crowd-kit's
    ``DawidSkene``, which the tests compare against).
    """
    posterior = np.bincount(t * n_labels + a, minlength=n_tasks * n_labels).reshape(n_tasks, n_labels).astype(float)
    posterior /= posterior.sum(axis=1, keepdims=True)
    cell = w * n_labels + a  # (worker, answer) of each judgement
    for _ in range(n_iter):
        priors = posterior.mean(axis=0)
        confusion = np.stack([
            np.bincount(cell, weights=posterior[t, k], minlength=n_workers * n_labels).reshape(n_workers, n_labels)
            for k in range(n_labels)
        ], axis=1) + 1e-10
        confusion /= confusion.sum(axis=2, keepdims=True)
        log_answer = np.log(confusion[w, :, a])  # [judgement, true class]
        log_post = np.log(np.maximum(priors, 1e-300)) + np.stack(
            [np.bincount(t, weights=log_answer[:, k], minlength=n_tasks) for k in range(n_labels)], axis=1
        )
        log_post -= log_post.max(axis=1, keepdims=True)
        updated = np.exp(log_post)
        updated /= updated.sum(axis=1, keepdims=True)
        moved = np.abs(updated - posterior).max()
        posterior = updated
        if moved < tol:
            break
    return posterior, confusion, posterior.mean(axis=0)


def mace(t: np.ndarray, w: np.ndarray, a: np.ndarray, n_tasks: int, n_workers: int, n_labels: int,
         *, n_restarts: int = 10, n_iter: int = 50, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """MACE (Hovy et al., 2013) by EM with the paper's smoothing: ``(posteriors [task, class], competence [worker])``.

    Worker j answers the true label with probability theta_j ("knowing"), else draws from their own
    distribution xi_j. True labels are uniform. E-step: P(task, k) proportional to the product over its
    answers a of (1 - theta_j) xi_j[a] + theta_j [a == k]; the expected "knowing" count of an answer is
    q[task, a] theta_j / ((1 - theta_j) xi_j[a] + theta_j). M-step: theta_j and xi_j from the expected
    counts with 0.01 / n_labels added to each. ``n_restarts`` random starts (seeded), ``n_iter`` rounds
    each; the start with the best marginal likelihood wins.
    """
    rng = np.random.default_rng(seed)
    smoothing = 0.01 / n_labels
    n_answers = np.bincount(w, minlength=n_workers).astype(float)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(n_restarts):
        theta = rng.uniform(0.0, 1.0, n_workers)
        xi = rng.uniform(0.0, 1.0, (n_workers, n_labels))
        xi /= xi.sum(axis=1, keepdims=True)
        for round_ in range(n_iter + 1):
            spam = (1.0 - theta[w]) * xi[w, a]  # per answer
            log_p = np.bincount(t, weights=np.log(spam), minlength=n_tasks)[:, None] + np.bincount(
                t * n_labels + a, weights=np.log(spam + theta[w]) - np.log(spam), minlength=n_tasks * n_labels
            ).reshape(n_tasks, n_labels)
            shift = log_p.max(axis=1, keepdims=True)
            p = np.exp(log_p - shift)
            likelihood = float((np.log(p.sum(axis=1) / n_labels) + shift[:, 0]).sum())
            q = p / p.sum(axis=1, keepdims=True)
            if round_ == n_iter:
                break
            knowing = q[t, a] * theta[w] / (spam + theta[w])
            theta = (np.bincount(w, knowing, n_workers) + smoothing) / (n_answers + 2 * smoothing)
            spam_counts = np.bincount(w * n_labels + a, weights=1.0 - knowing, minlength=n_workers * n_labels).reshape(n_workers, n_labels)
            xi = (spam_counts + smoothing) / (spam_counts.sum(axis=1, keepdims=True) + n_labels * smoothing)
        if best is None or likelihood > best[0]:
            best = (likelihood, q, theta)
    return best[1], best[2]


def _fit(tasks: pd.DataFrame, method: str) -> tuple[pd.Series, pd.Series]:
    """Aggregate ``task, worker, label`` rows: (label per task, reliability per worker in [0, 1])."""
    t, w, a, task_names, worker_names, label_names = _encode(tasks)
    if len(label_names) < 2:  # nothing to tell apart: every worker agrees with the only label
        return pd.Series(label_names[0], index=task_names), pd.Series(1.0, index=worker_names)
    shape = (len(task_names), len(worker_names), len(label_names))
    if method == "dawid_skene":
        posterior, confusion, priors = dawid_skene(t, w, a, *shape)
        reliability = (confusion[:, np.arange(shape[2]), np.arange(shape[2])] * priors).sum(axis=1)
    else:
        posterior, reliability = mace(t, w, a, *shape)
    labels = np.asarray(label_names, dtype=object)[posterior.argmax(axis=1)]  # ties: the first label in sorted order
    return pd.Series(labels, index=task_names), pd.Series(reliability, index=worker_names, dtype=float)


def _task_key(frame: pd.DataFrame) -> list[str]:
    return [f"{s}:{i}" for s, i in zip(frame["summary_id"], frame["sentence_index"], strict=True)]


@dataclass(frozen=True)
class Aggregation:
    """The outcome of one method on one judgement table.

    ``units``: one row per sentence as :func:`.factuality.sentence_majority` (``summary_id, sentence_index,
    n, factual, categories``); ``reliability``: per worker (index ``worker_id``) ``n`` judgements,
    ``factual`` and ``categories`` reliabilities (see the module docstring).
    """

    method: str
    units: pd.DataFrame
    reliability: pd.DataFrame


def _tasks(data: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    factual = pd.DataFrame({"task": _task_key(data), "worker": data["worker_id"].to_numpy(), "label": data["factual"].astype(bool).to_numpy()})
    sets = factual.assign(label=[_code_label(f, c) for f, c in zip(data["factual"], data["categories"], strict=True)])
    return factual, sets


def aggregate(judgements: pd.DataFrame, method: str = DEFAULT_METHOD, *, majority: pd.DataFrame | None = None) -> Aggregation:
    """Aggregate factual labels and error categories with ``method`` (two fits: labels, then code sets).

    ``majority``: :func:`.factuality.sentence_majority` of the same judgements when the caller has it.
    """
    check_method(method)
    majority = sentence_majority(judgements) if majority is None else majority
    if judgements.empty:
        empty = pd.DataFrame(columns=["n", "factual", "categories"]).rename_axis("worker_id")
        return Aggregation(method, majority, empty)
    data = _sorted(judgements)
    factual_tasks, set_tasks = _tasks(data)
    keys = _task_key(majority)
    n = data.groupby("worker_id").size()
    if method == "majority":
        truth = dict(zip(keys, majority["factual"], strict=True))
        truth_sets = {k: _code_label(f, c) for k, f, c in zip(keys, majority["factual"], majority["categories"], strict=True)}

        def agreement(tasks: pd.DataFrame, labels: dict) -> pd.Series:
            agree = [labels[t] == label for t, label in zip(tasks["task"], tasks["label"], strict=True)]
            return pd.Series(agree, index=tasks["worker"].to_numpy(), dtype=float).groupby(level=0).mean()

        reliability = pd.DataFrame({"n": n, "factual": agreement(factual_tasks, truth), "categories": agreement(set_tasks, truth_sets)})
        return Aggregation(method, majority, reliability.rename_axis("worker_id"))
    factual, factual_reliability = _fit(factual_tasks, method)
    code_sets, set_reliability = _fit(set_tasks, method)
    units = majority.copy()
    units["factual"] = [bool(factual[k]) for k in keys]
    categories = []
    for key, is_factual, modal in zip(keys, units["factual"], majority["categories"], strict=True):
        label = code_sets[key]
        if is_factual:
            categories.append(())
        elif label in (NO_ERROR, "unspecified"):
            categories.append(tuple(modal))
        else:
            categories.append(tuple(label.split(_SEP)))
    units["categories"] = categories
    reliability = pd.DataFrame({"n": n, "factual": factual_reliability, "categories": set_reliability})
    return Aggregation(method, units, reliability.rename_axis("worker_id"))


def sentence_labels(judgements: pd.DataFrame, method: str = DEFAULT_METHOD) -> pd.DataFrame:
    """One row per sentence (``summary_id, sentence_index, n, factual, categories``) aggregated with ``method``."""
    return aggregate(judgements, method).units


def _factual_only(judgements: pd.DataFrame, method: str) -> pd.Series:
    """Per summary: mean over sentences of the aggregated factual label (one fit, no categories)."""
    if method == "majority":
        units = sentence_majority(judgements)
        return units.groupby("summary_id")["factual"].mean().astype(float)
    data = _sorted(judgements)
    factual_tasks, _ = _tasks(data)
    labels, _ = _fit(factual_tasks, method)
    units = data[UNIT].drop_duplicates().assign(factual=lambda f: [bool(labels[k]) for k in _task_key(f)])
    return units.groupby("summary_id")["factual"].mean().astype(float)


def summary_scores(
    judgements: pd.DataFrame,
    method: str = DEFAULT_METHOD,
    codes: Sequence[str] = CODES,
    groups: Mapping[str, Sequence[str]] = GROUPS,
    with_flips: bool = True,
) -> pd.DataFrame:
    """FRANK's per-summary scores (``Factuality``, per category and group, ``Flip_*``) from labels aggregated
    with ``method``; ``majority`` is exactly :func:`.factuality.summary_human_scores`. ``Flip_<c>`` re-runs
    the aggregation of factual labels after dropping ``c`` from every judgement (a non-factual judgement
    left without codes becomes factual), as FRANK's ablation does for the majority."""
    check_method(method)
    if method == "majority" or judgements.empty:
        return summary_human_scores(judgements, codes, groups, with_flips=with_flips)
    frame = _summary_scores(sentence_labels(judgements, method), codes, groups)
    if with_flips:
        for name, removed in [*((c, [c]) for c in codes), *groups.items()]:
            gone = frozenset(normalize_code(c) for c in removed)
            factual = [
                bool(f) if (f or not cats) else not ({normalize_code(c) for c in cats} - gone)
                for f, cats in zip(judgements["factual"], judgements["categories"], strict=True)
            ]
            frame[f"Flip_{name}"] = _factual_only(judgements.assign(factual=factual), method)
    return frame


def aggregate_all(judgements: pd.DataFrame, methods: Sequence[str] = METHODS) -> list[Aggregation]:
    """:func:`aggregate` with each method, computing the majority once."""
    majority = sentence_majority(judgements)
    return [aggregate(judgements, m, majority=majority) for m in methods]


def worker_reliability(judgements: pd.DataFrame, methods: Sequence[str] = METHODS) -> pd.DataFrame:
    """Per worker (index ``worker_id``): ``n`` and, per method, ``<method>`` (factual labels) and
    ``<method>_categories`` reliabilities."""
    return reliability_table(aggregate_all(judgements, methods))


def reliability_table(aggregations: Sequence[Aggregation]) -> pd.DataFrame:
    """The reliabilities of several aggregations side by side (columns ``n``, ``<method>``, ``<method>_categories``)."""
    parts = []
    for agg in aggregations:
        parts.append(agg.reliability[["factual", "categories"]].rename(columns={"factual": agg.method, "categories": f"{agg.method}_categories"}))
    n = next((agg.reliability["n"] for agg in aggregations if not agg.reliability.empty), pd.Series(dtype=int))
    return pd.concat([n.rename("n"), *parts], axis=1).rename_axis("worker_id")


def method_comparison(aggregations: Sequence[Aggregation]) -> dict[str, dict]:
    """Per method: sentences, share judged non-factual, and sentences whose factual label or categories
    differ from the majority's (the first aggregation must be the majority)."""
    if not aggregations or aggregations[0].units.empty:
        return {}
    majority = aggregations[0].units
    out = {}
    for agg in aggregations:
        units = agg.units
        out[agg.method] = {
            "sentences": len(units),
            "non_factual_share": float((~units["factual"].astype(bool)).mean()),
            "factual_differs_from_majority": int((units["factual"].to_numpy() != majority["factual"].to_numpy()).sum()),
            "categories_differ_from_majority": int(sum(a != b for a, b in zip(units["categories"], majority["categories"], strict=True))),
        }
    return out
