"""How a model annotator (an LLM doing the FRANK task) agrees with the human annotators.

Inputs are long tables of sentence judgements (``summary_id, sentence_index, worker_id, factual``), one
for the humans and one for the model annotators. A *unit* is one (summary, sentence).

* Human majority of a unit: factual when at least half of its human annotators said factual (ties count
  as factual, as in :mod:`.agreement`).
* A model's agreement: Cohen's kappa (scikit-learn) between its labels and the human majority, over the
  units it shares with at least ``min_humans`` humans.
* Each human's agreement, for comparison: Cohen's kappa between that human's labels and the majority of
  the *other* humans on the unit (leave-one-out, so no one is compared with a majority they are part of),
  over units with at least ``min_humans`` other humans.
* The model's rank among the humans: 1 + the number of humans whose kappa is higher (1 = best).
* Human-human agreement: the mean (and range) of Cohen's kappa over pairs of humans sharing at least
  ``min_units`` units.

A kappa is None when fewer than ``min_units`` units are shared or both label lists are constant.
"""
from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

from ._util import clean_float

UNIT = ["summary_id", "sentence_index"]


def _kappa(a: pd.Series, b: pd.Series, min_units: int) -> tuple[float | None, int]:
    """Cohen's kappa of two boolean label series aligned on their index (shared units only)."""
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()
    n = len(both)
    if n < min_units:
        return None, n
    x, y = both["a"].astype(bool).to_numpy(), both["b"].astype(bool).to_numpy()
    if len(set(x)) == 1 and len(set(y)) == 1:
        return None, n  # chance agreement is 1: kappa is undefined
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = cohen_kappa_score(x, y)
    return clean_float(value), n


def _labels(judgements: pd.DataFrame) -> pd.DataFrame:
    """``factual`` per (unit, worker): one row per unit, one column per worker."""
    return judgements.pivot_table(index=UNIT, columns="worker_id", values="factual", aggfunc="first").astype("float")


def human_majority(human: pd.DataFrame, min_humans: int = 1, exclude_worker: int | None = None) -> pd.Series:
    """Majority label per unit (True = factual; ties factual) over humans other than ``exclude_worker``.

    Examples
    --------
    >>> human = pd.DataFrame({"summary_id": [1, 1, 1, 1], "sentence_index": [0, 0, 1, 1], "worker_id": [7, 8, 7, 8],
    ...                       "factual": [True, False, False, False]})
    >>> human_majority(human).tolist(), human_majority(human, exclude_worker=8).tolist()
    ([True, False], [True, False])
    """
    table = _labels(human)
    if exclude_worker is not None and exclude_worker in table.columns:
        table = table.drop(columns=[exclude_worker])
    counts = table.notna().sum(axis=1)
    share = table.sum(axis=1) / counts.where(counts > 0)
    return (share >= 0.5)[counts >= min_humans]


def annotator_agreement(human: pd.DataFrame, model: pd.DataFrame, names: dict | None = None,
                        min_humans: int = 1, min_units: int = 5) -> dict | None:
    """Each model annotator's kappa against the human majority, its rank among the humans, and human-human kappa.

    ``names`` maps model worker ids to display names. None when there are no model judgements or no humans.
    """
    if model.empty or human.empty:
        return None
    human_table = _labels(human)
    majority = human_majority(human, min_humans)
    human_kappas: dict = {}
    for worker in human_table.columns:
        loo = human_majority(human, min_humans, exclude_worker=worker)
        value, n = _kappa(human_table[worker].dropna().astype(bool), loo, min_units)
        if value is not None:
            human_kappas[worker] = {"kappa": value, "n_sentences": n}
    pairs = []
    for w1, w2 in combinations(human_table.columns, 2):
        value, _ = _kappa(human_table[w1].dropna().astype(bool), human_table[w2].dropna().astype(bool), min_units)
        if value is not None:
            pairs.append(value)
    ranked = sorted((v["kappa"] for v in human_kappas.values()), reverse=True)
    models = []
    model_table = _labels(model)
    for worker in model_table.columns:
        value, n = _kappa(model_table[worker].dropna().astype(bool), majority, min_units)
        models.append({
            "worker_id": int(worker),
            "name": (names or {}).get(worker, str(worker)),
            "kappa_vs_majority": value,
            "n_sentences": n,
            "rank_among_humans": None if value is None else 1 + sum(k > value for k in ranked),
            "n_humans_ranked": len(ranked),
            "factual_share": clean_float(model_table[worker].dropna().astype(bool).mean()),
        })
    return {
        "models": models,
        "human_kappa_vs_others": {
            "mean": clean_float(np.mean(ranked)) if ranked else None,
            "median": clean_float(np.median(ranked)) if ranked else None,
            "min": ranked[-1] if ranked else None, "max": ranked[0] if ranked else None,
            "n_workers": len(ranked),
        },
        "human_pairwise_kappa": {
            "mean": clean_float(np.mean(pairs)) if pairs else None,
            "min": clean_float(min(pairs)) if pairs else None, "max": clean_float(max(pairs)) if pairs else None,
            "n_pairs": len(pairs),
        },
        "definition": (
            "Cohen's kappa of each model annotator's factual labels against the human majority label of the sentence "
            "(ties factual); each human against the majority of the other humans (leave-one-out); rank 1 = best."
        ),
    }
