"""AggreFact's unified error taxonomy (Tang et al., ACL 2023, Section 4) and the statistics read through it.

Each dataset annotates errors in its own typology. AggreFact maps them onto two axes: *intrinsic* (the
wrong information comes from the article) or *extrinsic* (it is not in the article), and *noun phrase*
or *predicate* (where the error sits). FRANK's categories map as the paper states:

=========================  =====================
FRANK category             unified type
=========================  =====================
EntE, OutE                 extrinsic noun phrase
RelE (PredE), GramE        extrinsic predicate
CircE, CorefE              intrinsic noun phrase
LinkE, OtherE              intrinsic predicate
=========================  =====================

BUMP's types carry the intrinsic/extrinsic distinction themselves, so only the constituent is decided here:

* ``intrinsic_entity`` / ``extrinsic_entity``: noun phrase (the entity is one), intrinsic/extrinsic as BUMP says;
* ``intrinsic_predicate`` / ``extrinsic_predicate``: predicate, as BUMP says;
* ``intrinsic_circumstance`` / ``extrinsic_circumstance``: noun phrase (a time, duration or location
  phrase), keeping BUMP's own intrinsic/extrinsic label rather than FRANK's blanket "CircE is intrinsic";
* ``coreference``: intrinsic noun phrase, as FRANK's CorefE (a pronoun pointing at the wrong entity);
* ``other``: intrinsic predicate, as FRANK's OtherE.

**As the paper does it** (:func:`unified_frame_from_judgements`): from per-annotator judgements, a summary has a
type when *more than one annotator* marked an error of that type in it. FRANK's sentence annotations have no
"entire sentence" type (the paper says so), so none is derived from them. AggreFact types FRANK's CNN/DM part
only (its XSum summaries are typed from XSumFaith): :data:`PAPER_CORPORA` is the default corpus choice where
the types come from FRANK's release, others are an option.

**Approximation** (:func:`unified_frame`): from FRANK's released *summary-level* category scores alone (no
per-annotator judgements), a summary has a type when one of its categories scores below 1 (some sentence was
labelled with it). This counts a category one annotator's majority gave, not "more than one annotator", so the
report names it an approximation. The platform's earlier "entire sentence" rule (no factual sentence and errors
on both a noun phrase and a predicate) is an option (``entire_sentence=True``), off by default. A summary
labelled inconsistent without any category (a binary benchmark, a yes/no crowd task) is *untyped*: it counts as
incorrect but enters no type.

Pure Python/pandas; no Django.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from annotate.bump import taxonomy as bump_taxonomy
from annotate.frank.typology import CODES as FRANK_CODES
from annotate.frank.typology import normalize_code

from ._util import clean_float

INTRINSIC_NP = "intrinsic_np"
INTRINSIC_PREDICATE = "intrinsic_predicate"
EXTRINSIC_NP = "extrinsic_np"
EXTRINSIC_PREDICATE = "extrinsic_predicate"
ENTIRE_SENTENCE = "entire_sentence"
CONSTITUENT_TYPES: tuple[str, ...] = (INTRINSIC_NP, INTRINSIC_PREDICATE, EXTRINSIC_NP, EXTRINSIC_PREDICATE)
UNIFIED_TYPES: tuple[str, ...] = (*CONSTITUENT_TYPES, ENTIRE_SENTENCE)
LABELS: dict[str, str] = {
    INTRINSIC_NP: "Intrinsic noun phrase",
    INTRINSIC_PREDICATE: "Intrinsic predicate",
    EXTRINSIC_NP: "Extrinsic noun phrase",
    EXTRINSIC_PREDICATE: "Extrinsic predicate",
    ENTIRE_SENTENCE: "Entire sentence",
}
#: "a type when more than one annotator marked it"
MIN_ANNOTATORS = 2
#: The corpora AggreFact types from FRANK's annotations (its XSum summaries are typed from XSumFaith).
PAPER_CORPORA: tuple[str, ...] = ("cnndm",)
NOUN_PHRASE = frozenset({INTRINSIC_NP, EXTRINSIC_NP})
PREDICATE = frozenset({INTRINSIC_PREDICATE, EXTRINSIC_PREDICATE})

FRANK_TO_UNIFIED: dict[str, str] = {
    "EntE": EXTRINSIC_NP,
    "OutE": EXTRINSIC_NP,
    "RelE": EXTRINSIC_PREDICATE,
    "GramE": EXTRINSIC_PREDICATE,
    "CircE": INTRINSIC_NP,
    "CorefE": INTRINSIC_NP,
    "LinkE": INTRINSIC_PREDICATE,
    "OtherE": INTRINSIC_PREDICATE,
}
BUMP_TO_UNIFIED: dict[str, str] = {
    "intrinsic_entity": INTRINSIC_NP,
    "extrinsic_entity": EXTRINSIC_NP,
    "intrinsic_predicate": INTRINSIC_PREDICATE,
    "extrinsic_predicate": EXTRINSIC_PREDICATE,
    "intrinsic_circumstance": INTRINSIC_NP,
    "extrinsic_circumstance": EXTRINSIC_NP,
    "coreference": INTRINSIC_NP,
    "other": INTRINSIC_PREDICATE,
}


def frank_to_unified(code: str) -> str:
    """The unified type of a FRANK category code or alias (``PredE`` is ``RelE``); ``ValueError`` if unknown."""
    return FRANK_TO_UNIFIED[normalize_code(code)]


def bump_to_unified(code: str) -> str:
    """The unified type of a BUMP error type (code or name as in BUMP's files); ``ValueError`` if unknown."""
    return BUMP_TO_UNIFIED[bump_taxonomy.normalize(code)]


def summary_types(
    codes: Iterable[str], factuality: float | None, *, protocol: str = "frank", entire_sentence: bool = False,
) -> tuple[str, ...]:
    """The unified types of one summary from the error codes found in it and its human factuality.

    ``codes``: FRANK categories (``protocol="frank"``) or BUMP types (``"bump"``) present in the summary.
    Returns ``()`` for a factual or untyped summary, else its constituent types in ``CONSTITUENT_TYPES`` order.
    With ``entire_sentence`` (the platform's option, not the paper's), a summary wrong as a whole (factuality 0,
    errors on both a noun phrase and a predicate) is ``("entire_sentence",)`` instead.

    Examples
    --------
    >>> summary_types(["EntE", "RelE"], 0.0)
    ('extrinsic_np', 'extrinsic_predicate')
    >>> summary_types(["EntE", "RelE"], 0.0, entire_sentence=True)
    ('entire_sentence',)
    """
    convert = frank_to_unified if protocol == "frank" else bump_to_unified
    found = {convert(code) for code in codes}
    if not found or factuality is None or factuality >= 1:
        return ()
    if entire_sentence and factuality <= 0 and found & NOUN_PHRASE and found & PREDICATE:
        return (ENTIRE_SENTENCE,)
    return tuple(t for t in CONSTITUENT_TYPES if t in found)


def annotator_types(judgements: pd.DataFrame, *, min_annotators: int = MIN_ANNOTATORS) -> dict[int, tuple[str, ...]]:
    """Per summary id, the unified types that at least ``min_annotators`` distinct annotators marked in it.

    ``judgements``: one row per (summary sentence, annotator) with ``summary_id``, ``worker_id`` and
    ``categories`` (FRANK codes). An annotator marks a type in a summary when any of their sentence answers
    carries a category of that type.

    Examples
    --------
    >>> rows = pd.DataFrame({"summary_id": [1, 1, 1, 1], "worker_id": [7, 8, 9, 9], "sentence_index": [0, 0, 0, 1],
    ...                      "categories": [["EntE"], ["OutE"], ["RelE"], ["RelE"]]})
    >>> annotator_types(rows)
    {1: ('extrinsic_np',)}
    """
    marked: dict[int, dict[str, set]] = {}
    for summary_id, worker_id, categories in judgements[["summary_id", "worker_id", "categories"]].itertuples(index=False):
        for code in categories or ():
            try:
                unified = frank_to_unified(code)
            except (KeyError, ValueError):
                continue
            marked.setdefault(int(summary_id), {}).setdefault(unified, set()).add(worker_id)
    out = {}
    for summary_id, by_type in marked.items():
        types = tuple(t for t in CONSTITUENT_TYPES if len(by_type.get(t, ())) >= min_annotators)
        if types:
            out[summary_id] = types
    return out


def unified_frame_from_judgements(
    summaries: pd.DataFrame, judgements: pd.DataFrame, *, min_annotators: int = MIN_ANNOTATORS,
) -> pd.DataFrame:
    """As :func:`unified_frame`, with the types AggreFact's way: those more than one annotator marked
    (:func:`annotator_types`); never "entire sentence". ``incorrect`` is the human factuality below 1."""
    types = annotator_types(judgements, min_annotators=min_annotators)
    factuality = summaries["Factuality"].astype(float)
    rows = [types.get(int(i), ()) if f < 1 else () for i, f in zip(summaries.index, factuality, strict=True)]
    return _typed_frame(summaries.index, factuality, rows)


def _typed_frame(index: pd.Index, factuality: pd.Series, rows: list[tuple[str, ...]]) -> pd.DataFrame:
    out = pd.DataFrame(index=index)
    out["incorrect"] = (factuality < 1).to_numpy()
    out["typed"] = [bool(r) for r in rows]
    for t in UNIFIED_TYPES:
        out[t] = [t in r for r in rows]
    return out


def unified_frame(summaries: pd.DataFrame, codes: Sequence[str] = FRANK_CODES, *, entire_sentence: bool = False) -> pd.DataFrame:
    """Per summary (same index): ``incorrect``, ``typed`` and one boolean column per unified type.

    The approximation from summary-level scores (see the module doc): ``summaries`` has ``Factuality`` and
    FRANK's per-category columns (1 - share of sentences with that error; a summary has the category when its
    column is below 1, a missing column or value meaning none).
    """
    factuality = summaries["Factuality"].astype(float)
    present = {c: (summaries[c].astype(float).fillna(1.0) < 1) if c in summaries else pd.Series(False, index=summaries.index) for c in codes}
    rows = []
    for position in range(len(summaries.index)):
        found = [c for c in codes if bool(present[c].iloc[position])]
        rows.append(summary_types(found, clean_float(factuality.iloc[position]), entire_sentence=entire_sentence))
    return _typed_frame(summaries.index, factuality, rows)


def type_distribution(frame: pd.DataFrame, by: str) -> dict[str, dict] | None:
    """Error-type distribution per value of ``by`` (AggreFact Figures 3-4).

    ``frame``: :func:`unified_frame` columns plus ``by``. Returns ``{VALUE: {"n", "n_incorrect", "n_typed",
    TYPE: share of the typed incorrect summaries with that type, "counts": {TYPE: count}}}``; a summary
    with several constituent types counts once under each, so shares may add up to more than 1.
    """
    if frame.empty:
        return None
    out = {}
    for value, group in frame.groupby(by, sort=True):
        typed = group[group["typed"]]
        counts = {t: int(typed[t].sum()) for t in UNIFIED_TYPES}
        entry: dict = {"n": len(group), "n_incorrect": int(group["incorrect"].sum()), "n_typed": len(typed)}
        for t in UNIFIED_TYPES:
            entry[t] = clean_float(counts[t] / len(typed)) if len(typed) else None
        entry["counts"] = counts
        out[str(value)] = entry
    return out


def recall_by_type(
    frame: pd.DataFrame, metrics: Sequence[str], thresholds: Mapping[str, Mapping[str, float | None]],
    *, strict: Mapping[str, bool] | None = None,
) -> dict[str, dict[str, dict[str, dict]]] | None:
    """Recall of each detector per unified error type at its tuned threshold (AggreFact Table 5).

    ``frame``: one row per summary with ``dataset``, ``split``, the :func:`unified_frame` columns and one
    column per metric (higher = more faithful); ``thresholds[metric][dataset]`` the threshold tuned on that
    dataset's validation split. A summary is *detected* when it is predicted inconsistent: its score is below
    the threshold, or at most the threshold for metrics whose ``strict[metric]`` is true (AggreFact's rule
    "consistent when strictly above"). Recall of a type = detected share of the test summaries with that type. Returns
    ``{metric: {dataset: {TYPE: {"recall", "n"}}}}``; ``None`` without test summaries.
    """
    test = frame[frame["split"] == "test"]
    if test.empty:
        return None
    out: dict[str, dict[str, dict[str, dict]]] = {}
    for metric in metrics:
        per_dataset = {}
        for dataset, sub in test.groupby("dataset", sort=True):
            threshold = (thresholds.get(metric) or {}).get(str(dataset))
            scored = sub[sub[metric].notna()]
            if threshold is None or scored.empty:
                continue
            values = scored[metric].to_numpy(dtype=float)
            detected = values <= threshold if (strict or {}).get(metric) else values < threshold
            cells = {}
            for t in UNIFIED_TYPES:
                mask = scored[t].to_numpy(dtype=bool)
                n = int(mask.sum())
                cells[t] = {"recall": clean_float(detected[mask].mean()) if n else None, "n": n}
            everything = scored["incorrect"].to_numpy(dtype=bool)
            cells["all_errors"] = {"recall": clean_float(detected[everything].mean()) if everything.any() else None, "n": int(everything.sum())}
            per_dataset[str(dataset)] = cells
        out[metric] = per_dataset
    return out


def type_counts(codes: Iterable[str], *, protocol: str = "bump") -> dict[str, int]:
    """How many of the given error codes (one per pair or per error) fall in each constituent type."""
    convert = frank_to_unified if protocol == "frank" else bump_to_unified
    converted = [convert(c) for c in codes]
    return {t: int(np.sum([c == t for c in converted])) for t in CONSTITUENT_TYPES}


def pair_consistency_by_type(meta: Mapping[str, Mapping] | None) -> dict[str, dict[str, dict]] | None:
    """Minimal-pair consistency per unified type, from the per-BUMP-type rows of ``minimal_pairs``.

    ``meta``: ``{metric: {"by_error_type": {BUMP code: {"consistency", "n_pairs"}}}}`` (the report's
    ``meta_evaluation``). Consistency is a share of scored pairs, so a unified type's value is the
    pair-weighted mean of its BUMP types: ``sum(consistency x n_pairs) / sum(n_pairs)``. Returns
    ``{metric: {TYPE: {"consistency", "n_pairs"}}}`` over the constituent types; ``None`` without pairs.
    """
    if not meta:
        return None
    out: dict[str, dict[str, dict]] = {}
    for metric, entry in meta.items():
        wins = dict.fromkeys(CONSTITUENT_TYPES, 0.0)
        scored = dict.fromkeys(CONSTITUENT_TYPES, 0)
        for code, row in (entry.get("by_error_type") or {}).items():
            unified = BUMP_TO_UNIFIED.get(code)
            if unified is None or not row or not row.get("n_pairs"):
                continue
            wins[unified] += (row.get("consistency") or 0.0) * row["n_pairs"]
            scored[unified] += row["n_pairs"]
        out[metric] = {t: {"consistency": clean_float(wins[t] / scored[t]) if scored[t] else None, "n_pairs": scored[t]} for t in CONSTITUENT_TYPES}
    return out
