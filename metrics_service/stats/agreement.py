"""Inter-annotator agreement on sentence judgements (FRANK section 4.2).

Input is a long table of judgements, one row per (summary, sentence, worker)::

    summary_id  sentence_index  worker_id  factual  categories
    1           0               7          False    ["EntE"]

A *unit* is one (summary_id, sentence_index); only units with at least two judgements count.

* Majority label of a unit: factual when at least half of its annotators said factual (ties count as
  factual, the benefit of the doubt: :func:`~metrics_service.stats.majority.majority_label`).
* ``majority_agreement``: the share of all judgements (pooled over units) that agree with their unit's
  majority label (FRANK: 91%).
* Fleiss' kappa (statsmodels) needs the same number of raters on every unit: it is computed on the units
  having the most common number of raters (``n_sentences_kappa`` says how many). Krippendorff's alpha
  (nominal) uses every unit and copes with missing raters.
* Category agreement uses the units that *all* annotators marked non-factual. Each annotator's category
  set is one nominal label: ``{"EntE", "OutE"}`` becomes ``"EntE+OutE"`` (codes in typology order), so two
  annotators agree only when they chose exactly the same set. FRANK's annotators mostly chose one category,
  where this is the plain category. ``per_category`` adds, for each category, the binary Fleiss' kappa of
  "chose this category or not" on the same units.

statsmodels and scikit-learn are imported where a kappa is computed, not with the module: the span protocol
reads :data:`UNIT` and Krippendorff's alpha from here at every web and worker process's start, which must not
pay for either (about a second and a half of CPU each).
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import krippendorff
import numpy as np
import pandas as pd

from taxonomies.frank import CODES, normalize_code

from ._util import clean_float
from .majority import majority_label

UNIT = ["summary_id", "sentence_index"]
NO_CATEGORY = "none"


def set_label(categories: Iterable[str] | None) -> str:
    """One nominal label for a category set: codes in typology order joined by ``+`` (``"none"`` if empty).

    >>> set_label(["OutE", "EntE", "EntE"])
    'EntE+OutE'
    """
    codes = {normalize_code(c) for c in (categories or [])}
    if not codes:
        return NO_CATEGORY
    return "+".join(c for c in CODES if c in codes)


def _units_with_raters(judgements: pd.DataFrame, min_raters: int = 2) -> pd.DataFrame:
    """Judgements of units that have at least ``min_raters`` distinct workers."""
    if judgements.empty:
        return judgements
    sizes = judgements.groupby(UNIT)["worker_id"].transform("nunique")
    return judgements[sizes >= min_raters]


def fleiss_from_labels(judgements: pd.DataFrame, label: str) -> tuple[float | None, int]:
    """Fleiss' kappa of column ``label`` over units with the modal number of raters; (kappa, units used).

    Examples
    --------
    >>> table = pd.DataFrame({"summary_id": [1] * 6, "sentence_index": [0, 0, 0, 1, 1, 1],
    ...                       "label": ["wrong", "wrong", "right", "right", "right", "right"]})
    >>> kappa, units = fleiss_from_labels(table, "label")
    >>> round(kappa, 6), units
    (0.25, 2)
    """
    if judgements.empty:
        return None, 0
    counts = judgements.groupby(UNIT + [label]).size().unstack(fill_value=0)
    raters = counts.sum(axis=1)
    modal = int(raters.mode().max())
    table = counts[raters == modal].to_numpy()
    if table.shape[0] == 0 or modal < 2:
        return None, 0
    with np.errstate(divide="ignore", invalid="ignore"):
        from statsmodels.stats.inter_rater import fleiss_kappa  # at first use: see the module docstring

        kappa = fleiss_kappa(table, method="fleiss")
    return clean_float(kappa), int(table.shape[0])


def krippendorff_nominal(judgements: pd.DataFrame, label: str) -> float | None:
    """Krippendorff's alpha (nominal) of column ``label``; raters who skipped a unit are missing values.

    Examples
    --------
    >>> table = pd.DataFrame({"summary_id": [1] * 6, "sentence_index": [0, 0, 0, 1, 1, 1], "worker_id": [7, 8, 9] * 2,
    ...                       "label": ["wrong", "wrong", "right", "right", "right", "right"]})
    >>> round(krippendorff_nominal(table, "label"), 6)
    0.375
    """
    if judgements.empty:
        return None
    codes, _ = pd.factorize(judgements[label])
    frame = judgements.assign(_code=codes.astype(float))
    matrix = frame.pivot_table(index="worker_id", columns=UNIT, values="_code", aggfunc="first")
    if len(np.unique(codes)) < 2:
        # One value only: agreement is perfect but alpha is undefined (no variation to explain).
        return None
    try:
        alpha = krippendorff.alpha(reliability_data=matrix.to_numpy(dtype=float), level_of_measurement="nominal")
    except ValueError:
        return None
    return clean_float(alpha)


def unit_majority(judgements: pd.DataFrame) -> pd.Series:
    """The majority label of each unit (indexed by ``summary_id, sentence_index``), by the module's tie rule.

    Examples
    --------
    >>> table = pd.DataFrame({"summary_id": [1, 1, 2, 2], "sentence_index": [0, 0, 0, 0], "factual": [True, False, False, False]})
    >>> unit_majority(table).tolist()
    [True, False]
    """
    votes = judgements.assign(factual=judgements["factual"].astype(bool)).groupby(UNIT)["factual"].agg(["sum", "count"])
    labels = [bool(majority_label(int(factual), int(total))) for factual, total in zip(votes["sum"], votes["count"])]
    return pd.Series(labels, index=votes.index, dtype=bool, name="majority")


def majority_share(judgements: pd.DataFrame, label: str) -> float | None:
    """Pooled share of judgements that agree with their unit's most frequent ``label``.

    Examples
    --------
    >>> table = pd.DataFrame({"summary_id": [1, 1, 2, 2], "sentence_index": [0, 0, 0, 0],
    ...                       "label": ["EntE", "EntE", "OutE", "EntE+OutE"]})
    >>> majority_share(table, "label")
    0.75
    """
    if judgements.empty:
        return None
    counts = judgements.groupby(UNIT + [label]).size().unstack(fill_value=0)
    return clean_float(counts.max(axis=1).sum() / counts.to_numpy().sum())


def factual_agreement(judgements: pd.DataFrame) -> dict | None:
    """Agreement on the factual yes/no labels; ``None`` when no sentence has two annotators.

    Returns ``{"fleiss_kappa", "krippendorff_alpha", "majority_agreement", "n_sentences",
    "n_sentences_kappa", "raters_per_sentence", "n_judgements"}``.

    Examples
    --------
    >>> judgements = pd.DataFrame({
    ...     "summary_id": [1] * 6, "sentence_index": [0, 0, 0, 1, 1, 1], "worker_id": [7, 8, 9] * 2,
    ...     "factual": [False, False, True, True, True, True], "categories": [["EntE"], ["EntE"], [], [], [], []]})
    >>> result = factual_agreement(judgements)
    >>> round(result["fleiss_kappa"], 6), round(result["majority_agreement"], 3), result["n_sentences"]
    (0.25, 0.833, 2)
    """
    units = _units_with_raters(judgements)
    if units.empty:
        return None
    units = units.assign(label=units["factual"].astype(bool).map({True: "factual", False: "not_factual"}))
    kappa, used = fleiss_from_labels(units, "label")
    joined = units.join(unit_majority(units), on=UNIT)
    agree = (joined["factual"].astype(bool) == joined["majority"]).mean()
    raters = units.groupby(UNIT)["worker_id"].nunique()
    return {
        "fleiss_kappa": kappa,
        "krippendorff_alpha": krippendorff_nominal(units, "label"),
        "majority_agreement": clean_float(agree),
        "n_sentences": len(raters),
        "n_sentences_kappa": used,
        "raters_per_sentence": clean_float(raters.mean()),
        "n_judgements": len(units),
    }


def category_agreement(judgements: pd.DataFrame, codes: Sequence[str] = CODES) -> dict | None:
    """Agreement on the error category sets of sentences that every annotator marked non-factual.

    Returns ``{"fleiss_kappa", "krippendorff_alpha", "majority_agreement", "n_sentences",
    "n_sentences_kappa", "label": "category set", "per_category": {CODE: kappa}}`` or ``None``.

    Examples
    --------
    >>> judgements = pd.DataFrame({
    ...     "summary_id": [1, 1, 2, 2], "sentence_index": [0, 0, 0, 0], "worker_id": [7, 8, 7, 8],
    ...     "factual": [False] * 4, "categories": [["EntE"], ["EntE"], ["OutE"], ["OutE", "EntE"]]})
    >>> result = category_agreement(judgements)
    >>> result["majority_agreement"], result["n_sentences"]
    (0.75, 2)
    """
    units = _units_with_raters(judgements)
    if units.empty:
        return None
    all_wrong = ~units.groupby(UNIT)["factual"].transform("max").astype(bool)
    units = units[all_wrong]
    if units.empty:
        return None
    units = units.assign(label=units["categories"].map(set_label))
    kappa, used = fleiss_from_labels(units, "label")
    per_category: dict[str, float | None] = {}
    for code in codes:
        chose = units.assign(chose=units["categories"].map(lambda cats, c=code: c in {normalize_code(x) for x in cats or []}))
        if chose["chose"].any():
            per_category[code] = fleiss_from_labels(chose, "chose")[0]
    return {
        "fleiss_kappa": kappa,
        "krippendorff_alpha": krippendorff_nominal(units, "label"),
        "majority_agreement": majority_share(units, "label"),
        "n_sentences": int(units.groupby(UNIT).ngroups),
        "n_sentences_kappa": used,
        "label": "category set",
        "per_category": per_category,
    }


def expert_agreement(judgements: pd.DataFrame, experts: pd.DataFrame) -> dict | None:
    """Cohen's kappa (scikit-learn) between the crowd majority label and expert labels.

    ``experts`` has ``summary_id, sentence_index, expert, factual``; each expert label is paired with the
    crowd majority of its sentence (sentences without crowd judgements are skipped).
    Returns ``{"cohen_kappa", "accuracy", "n"}`` or ``None`` without any pair.

    Examples
    --------
    >>> judgements = pd.DataFrame({
    ...     "summary_id": [1] * 6, "sentence_index": [0, 0, 0, 1, 1, 1], "worker_id": [7, 8, 9] * 2,
    ...     "factual": [False, False, True, True, True, True], "categories": [["EntE"], ["EntE"], [], [], [], []]})
    >>> experts = pd.DataFrame({"summary_id": [1, 1], "sentence_index": [0, 1], "expert": ["e1", "e1"],
    ...                         "factual": [False, True]})
    >>> expert_agreement(judgements, experts)
    {'cohen_kappa': 1.0, 'accuracy': 1.0, 'n': 2}
    """
    if judgements.empty or experts.empty:
        return None
    crowd = unit_majority(judgements).rename("crowd")
    pairs = experts.join(crowd, on=UNIT, how="inner")
    if pairs.empty:
        return None
    crowd_labels = pairs["crowd"].astype(bool).to_numpy()
    expert_labels = pairs["factual"].astype(bool).to_numpy()
    kappa = float("nan")
    if len(pairs) >= 2 and len(set(crowd_labels) | set(expert_labels)) > 1:
        with warnings.catch_warnings():
            # One label on both sides: kappa is undefined and reported as None.
            warnings.simplefilter("ignore")
            from sklearn.metrics import cohen_kappa_score  # at first use: see the module docstring

            kappa = cohen_kappa_score(crowd_labels, expert_labels)
    return {
        "cohen_kappa": clean_float(kappa),
        "accuracy": clean_float((crowd_labels == expert_labels).mean()),
        "n": len(pairs),
    }
