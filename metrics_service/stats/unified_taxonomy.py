"""Statistics read through AggreFact's unified error types (the types themselves: ``taxonomies.unified``).

**As the paper does it** (:func:`unified_frame_from_judgements`): a summary has a type when more than one
annotator marked an error of that type in it. **Approximation** (:func:`unified_frame`): from FRANK's released
summary-level category scores alone; the report names it an approximation. ``taxonomies.unified`` explains both.

Pure Python/pandas; no Django.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from taxonomies.frank import CODES as FRANK_CODES
from taxonomies.unified import BUMP_TO_UNIFIED, CONSTITUENT_TYPES, MIN_ANNOTATORS, UNIFIED_TYPES, annotator_types, summary_types

from ._util import clean_float


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
    # Plain arrays: reading a frame cell by cell costs a pandas lookup each (FRANK: 2246 summaries x 8 codes).
    present = {c: (summaries[c].astype(float).fillna(1.0) < 1).to_numpy() for c in codes if c in summaries}
    rows = [
        summary_types([c for c in present if present[c][position]], clean_float(value), entire_sentence=entire_sentence)
        for position, value in enumerate(factuality.to_numpy())
    ]
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
