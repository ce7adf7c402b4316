"""Human factuality of summaries from sentence judgements (FRANK section 5, Table 3, Figures 2 and 6).

Definitions (one *unit* is a summary sentence; see ``agreement`` for the judgement table):

* The majority label of a unit is "factual" when at least half of its annotators said factual
  (:func:`~metrics_service.stats.majority.majority_label`, ties factual).
* The error categories of a non-factual unit are its *modal* categories: the codes chosen by the most
  annotators (all tied codes are kept; :func:`~metrics_service.stats.majority.modal_categories`).
* Human factuality of a summary = mean over its judged sentences of the majority label (1 factual, 0 not);
  its score for category ``c`` = 1 - share of its sentences whose error categories include ``c`` (FRANK's
  per-category columns); a summary "has an error of category c" when that score is below 1.
* ``Flip_<c>`` (FRANK's ablation): every judgement's category set loses ``c`` (or the codes of a group);
  a non-factual judgement left with no category becomes factual; the majorities and the factuality are
  then recomputed.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from taxonomies.frank import CODES, GROUPS, normalize_code

from ._util import clean_float
from .majority import majority_label, modal_categories

UNIT = ["summary_id", "sentence_index"]
NO_ERROR = "NoE"


def _codes(categories: Iterable[str] | None) -> frozenset[str]:
    return frozenset(normalize_code(c) for c in (categories or []))


def sentence_majority(judgements: pd.DataFrame) -> pd.DataFrame:
    """One row per unit: ``summary_id, sentence_index, n, factual`` (majority) and ``categories`` (modal codes).

    ``categories`` is a tuple in typology order, empty for factual units.

    Examples
    --------
    >>> judgements = pd.DataFrame({
    ...     "summary_id": [1, 1, 1, 1, 1], "sentence_index": [0, 0, 0, 1, 1],
    ...     "factual": [False, False, True, True, True],
    ...     "categories": [["EntE"], ["EntE", "OutE"], [], [], []]})
    >>> units = sentence_majority(judgements)
    >>> units["factual"].tolist(), units["categories"].tolist(), units["n"].tolist()
    ([False, True], [('EntE',), ()], [3, 2])
    """
    if judgements.empty:
        return pd.DataFrame(columns=UNIT + ["n", "factual", "categories"])
    rows = []
    for (summary_id, sentence_index), group in judgements.groupby(UNIT, sort=True):
        majority_factual = bool(majority_label(int(group["factual"].astype(bool).sum()), len(group)))
        categories: tuple[str, ...] = ()
        if not majority_factual:
            modal = modal_categories(_codes(cats) for cats in group["categories"])
            categories = tuple(c for c in CODES if c in modal)
        rows.append((summary_id, sentence_index, len(group), majority_factual, categories))
    return pd.DataFrame(rows, columns=UNIT + ["n", "factual", "categories"])


def _summary_scores(units: pd.DataFrame, codes: Sequence[str], groups: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    frame = pd.DataFrame({"summary_id": units["summary_id"], "Factuality": units["factual"].astype(float)})
    for code in codes:
        frame[code] = units["categories"].map(lambda cats, c=code: 0.0 if c in cats else 1.0)
    for group, members in groups.items():
        frame[group] = units["categories"].map(lambda cats, m=frozenset(members): 0.0 if m & set(cats) else 1.0)
    return frame.groupby("summary_id").mean()


def flip_scores(judgements: pd.DataFrame, flipped: Iterable[str]) -> pd.Series:
    """Human factuality per summary after flipping the categories ``flipped`` to "no error".

    Examples
    --------
    Without EntE the first annotator has no error left, a tie that counts as factual; without OutE both keep
    EntE:

    >>> judgements = pd.DataFrame({"summary_id": [1, 1], "sentence_index": [0, 0], "factual": [False, False],
    ...                            "categories": [["EntE"], ["EntE", "OutE"]]})
    >>> flip_scores(judgements, ["EntE"]).tolist(), flip_scores(judgements, ["OutE"]).tolist()
    ([1.0], [0.0])
    """
    removed = frozenset(normalize_code(c) for c in flipped)

    def flip(row: pd.Series) -> bool:
        cats = _codes(row["categories"])
        if row["factual"] or not cats:
            return bool(row["factual"])
        return not (cats - removed)

    changed = judgements.assign(factual=judgements.apply(flip, axis=1), categories=[()] * len(judgements))
    units = sentence_majority(changed)
    return units.groupby("summary_id")["factual"].mean().astype(float)


def summary_human_scores(
    judgements: pd.DataFrame,
    codes: Sequence[str] = CODES,
    groups: Mapping[str, Sequence[str]] = GROUPS,
    with_flips: bool = True,
) -> pd.DataFrame:
    """Per-summary human scores from judgements, indexed by ``summary_id``.

    Columns: ``Factuality``, one per category code and group (1 - share of sentences with that error), and
    with ``with_flips`` a ``Flip_<code>`` / ``Flip_<group>`` column per category and group.

    Examples
    --------
    >>> judgements = pd.DataFrame({"summary_id": [1, 1, 2], "sentence_index": [0, 1, 0],
    ...                            "factual": [False, True, True], "categories": [["OutE"], [], []]})
    >>> scores = summary_human_scores(judgements)
    >>> scores[["Factuality", "OutE", "EntE", "Flip_OutE"]].to_dict("index")
    {1: {'Factuality': 0.5, 'OutE': 0.5, 'EntE': 1.0, 'Flip_OutE': 1.0}, 2: {'Factuality': 1.0, 'OutE': 1.0, 'EntE': 1.0, 'Flip_OutE': 1.0}}
    """
    columns = ["Factuality", *codes, *groups]
    if judgements.empty:
        return pd.DataFrame(columns=columns).rename_axis("summary_id")
    frame = _summary_scores(sentence_majority(judgements), codes, groups)
    if with_flips:
        for code in codes:
            frame[f"Flip_{code}"] = flip_scores(judgements, [code])
        for group, members in groups.items():
            frame[f"Flip_{group}"] = flip_scores(judgements, members)
    return frame


def error_distribution(
    summaries: pd.DataFrame, by: str = "system", codes: Sequence[str] = CODES
) -> dict[str, dict[str, float | int | None]]:
    """Share of summaries with at least one error, overall ("incorrect") and per category, per ``by`` value.

    ``summaries`` has ``by``, ``Factuality`` and per-category score columns (missing columns or values
    count as "no error of that category"). Returns ``{VALUE: {"incorrect", CODE..., "n"}}``.

    Examples
    --------
    >>> summaries = pd.DataFrame({"system": ["bart", "bart", "pgn"], "Factuality": [1.0, 0.5, 0.0],
    ...                           "EntE": [1.0, 0.5, 1.0]})
    >>> error_distribution(summaries, codes=["EntE"])
    {'bart': {'incorrect': 0.5, 'EntE': 0.5, 'n': 2}, 'pgn': {'incorrect': 1.0, 'EntE': 0.0, 'n': 1}}
    """
    out: dict[str, dict[str, float | int | None]] = {}
    if summaries.empty:
        return out
    rated = summaries[summaries["Factuality"].notna()]
    for value, group in rated.groupby(by, sort=True):
        row: dict[str, float | int | None] = {"incorrect": clean_float((group["Factuality"] < 1).mean())}
        for code in codes:
            column = group[code] if code in group else pd.Series(1.0, index=group.index)
            row[code] = clean_float((column.fillna(1.0) < 1).mean())
        row["n"] = len(group)
        out[str(value)] = row
    return out


def category_confusion(judgements: pd.DataFrame, codes: Sequence[str] = CODES) -> dict | None:
    """Majority-vs-annotator category confusion counts on non-factual units (FRANK Figure 6).

    For every unit whose majority is non-factual and has a modal category, the *majority category* is the
    first modal code (typology order); each annotator then adds one count to row = majority category and
    column = every category they chose (``"NoE"`` if they said factual or chose none). The diagonal counts
    annotators who agree with the majority. Returns ``{"labels", "columns", "matrix", "n_sentences"}``.

    Examples
    --------
    >>> judgements = pd.DataFrame({
    ...     "summary_id": [1, 1, 1], "sentence_index": [0, 0, 0], "factual": [False, False, True],
    ...     "categories": [["EntE"], ["EntE", "OutE"], []]})
    >>> confusion = category_confusion(judgements)
    >>> row = confusion["matrix"][confusion["labels"].index("EntE")]
    >>> {column: n for column, n in zip(confusion["columns"], row) if n}, confusion["n_sentences"]
    ({'EntE': 2, 'OutE': 1, 'NoE': 1}, 1)
    """
    if judgements.empty:
        return None
    units = sentence_majority(judgements)
    wrong = units[(~units["factual"].astype(bool)) & (units["categories"].map(len) > 0)]
    if wrong.empty:
        return None
    columns = [*codes, NO_ERROR]
    index = {c: i for i, c in enumerate(columns)}
    matrix = np.zeros((len(codes), len(columns)), dtype=int)
    majority = {(r.summary_id, r.sentence_index): r.categories[0] for r in wrong.itertuples()}
    for row in judgements.itertuples():
        key = (row.summary_id, row.sentence_index)
        if key not in majority:
            continue
        chosen = [c for c in codes if c in _codes(row.categories)] if not row.factual else []
        for code in chosen or [NO_ERROR]:
            matrix[index[majority[key]], index[code]] += 1
    return {"labels": list(codes), "columns": columns, "matrix": matrix.tolist(), "n_sentences": len(wrong)}
