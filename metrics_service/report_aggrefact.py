"""Report sections through AggreFact's lens (Tang et al., ACL 2023) and the comparisons a paper reports.

``aggrefact_sections(...)`` returns the keys that ``report.build_report`` adds to a report:

* ``unified_taxonomy``: error-type distributions per system category (SOTA / XFORMER / OLD) and per
  dataset (AggreFact Figures 3-4), from the human per-category judgements or imported FRANK scores;
* ``detector_recall``: each detector's recall per unified error type at its per-dataset tuned threshold
  (AggreFact Table 5);
* ``system_level_correlations``: correlations of per-system means;
* ``correlation_differences``: paired bootstrap of ``r(human, A) - r(human, B)`` beside Williams' test;
* ``correlations_holm`` and ``williams_holm``: Holm-adjusted p-values of those families;
* ``pairs_by_unified_type``: minimal-pair consistency (BUMP) per unified error type;
* ``benchmark_balanced_accuracy``: per source dataset (LLM-AggreFact's, or AggreFact's source
  benchmarks) balanced accuracy at LLM-AggreFact's fixed threshold and at a dev-tuned one.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_service import selectors
from metrics_service.stats import unified_taxonomy as unified
from metrics_service.stats.detection import (
    CATEGORY_ORDER,
    best_threshold,
    evaluate_threshold,
    system_category,
)
from metrics_service.stats.significance import (
    bootstrap_difference_matrix,
    holm,
    holm_matrix,
    system_level_correlation,
)
from taxonomies import unified as unified_types

# LLM-AggreFact's convention (MiniCheck's evaluation): a claim is predicted supported when the checker's
# probability exceeds 0.5, balanced accuracy per dataset, then the unweighted mean over datasets.
LLM_AGGREFACT_THRESHOLD = 0.5
DEFINITIONS = {
    "unified_taxonomy": (
        "AggreFact's unified types: FRANK EntE/OutE -> extrinsic noun phrase, RelE/GramE -> extrinsic predicate, "
        "CircE/CorefE -> intrinsic noun phrase, LinkE/OtherE -> intrinsic predicate; from per-annotator judgements "
        "a summary has a type when more than one annotator marked it (the paper's rule), with no 'entire sentence' "
        "type from FRANK's annotations; without judgements, an approximation from summary-level category scores "
        "(a type when a category scores below 1), named so in the section's 'source'; FRANK's release is typed on "
        "CNN/DM only, as the paper does (its XSum summaries are typed from XSumFaith); share of the typed "
        "incorrect summaries"
    ),
    "detector_recall": "share of the test summaries with an error type that the detector flags (score below "
                       "its per-dataset threshold tuned on the validation split)",
    "system_level": "Pearson, Spearman and Kendall tau-b of the per-system means (one point per system and dataset)",
    "correlation_differences": "r(human, row) - r(human, column), 95% paired percentile bootstrap of the rows "
                               "(1000 resamples, seed 0), partial when the correlations are",
    "pairs_by_unified_type": "minimal-pair consistency per unified type: pair-weighted mean of the BUMP types mapped to it",
    "holm": "Holm step-down adjustment (statsmodels multipletests) over the family shown",
    "benchmark_balanced_accuracy": (
        f"per source dataset: LLM-AggreFact's convention, supported when the score > {LLM_AGGREFACT_THRESHOLD} "
        "(for checkers that output a probability), and a threshold tuned on that dataset's dev split; the "
        "average is the unweighted mean over datasets"
    ),
}


TYPE_SOURCES = {
    "annotators": "per-annotator judgements: a type when more than one annotator marked it (AggreFact's rule)",
    "approximation": "approximation from summary-level category scores: a type when a category scores below 1 "
                     "(FRANK's released scores carry no per-annotator marks)",
}


def typed_summaries(human: pd.DataFrame, judgements: pd.DataFrame | None, *, corpora: tuple[str, ...] | None = None) -> tuple[pd.DataFrame, dict]:
    """The unified-type frame of the summaries and how it was made (``{"source", "rule", "corpora"}``).

    Per-annotator judgements with error categories give AggreFact's types; without them, the named approximation
    from summary-level scores. Types taken from FRANK's release (imported judgements or its scores) cover the
    corpora AggreFact types from FRANK (CNN/DM) unless ``corpora`` says otherwise; the platform's own judgements
    cover every corpus.
    """
    has_categories = judgements is not None and not judgements.empty and judgements["categories"].map(bool).any()
    if has_categories:
        frame = unified.unified_frame_from_judgements(human, judgements)
        source = "annotators"
        released = "source" in judgements and (judgements["source"] == "imported").all()
    else:
        frame = unified.unified_frame(human)
        source, released = "approximation", True
    chosen = corpora if corpora is not None else (unified_types.PAPER_CORPORA if released else None)
    if chosen is not None:
        frame = frame[human["dataset"].astype(str).isin(chosen).to_numpy()]
    return frame, {"source": source, "rule": TYPE_SOURCES[source], "corpora": list(chosen) if chosen is not None else "all"}


def unified_taxonomy_section(human: pd.DataFrame, judgements: pd.DataFrame | None = None) -> dict | None:
    """Distributions per system category, per dataset and per both; ``None`` when no summary is typed."""
    if human.empty:
        return None
    frame, made = typed_summaries(human, judgements)
    frame = frame.assign(
        category=human["system"].reindex(frame.index).map(system_category), dataset=human["dataset"].reindex(frame.index).astype(str),
    )
    if not frame["typed"].any():
        return None
    frame["category_dataset"] = frame["category"] + "|" + frame["dataset"]
    by_category = unified.type_distribution(frame, "category") or {}
    return {
        **made,
        "types": list(unified_types.UNIFIED_TYPES),
        "labels": unified_types.LABELS,
        "by_system_category": {c: by_category[c] for c in CATEGORY_ORDER if c in by_category},
        "by_dataset": unified.type_distribution(frame, "dataset"),
        "by_system_category_and_dataset": unified.type_distribution(frame, "category_dataset"),
        "frank_mapping": unified_types.FRANK_TO_UNIFIED,
        "bump_mapping": unified_types.BUMP_TO_UNIFIED,
    }


def detector_recall_section(
    human: pd.DataFrame, scores: pd.DataFrame, metrics: list[str], bacc: dict | None, judgements: pd.DataFrame | None = None,
) -> dict | None:
    """Recall per unified type at each metric's per-dataset threshold (from the balanced-accuracy section)."""
    if not bacc or human.empty:
        return None
    frame, _ = typed_summaries(human, judgements)
    if not frame["typed"].any():
        return None
    thresholds = {
        m: {ds: (cell or {}).get("threshold") for ds, cell in (entry.get("per_dataset") or {}).items()}
        for m, entry in bacc.items()
    }
    metrics = [m for m in metrics if m in thresholds and m in scores]
    frame = pd.concat([human[["dataset", "split"]].astype(str).reindex(frame.index), frame], axis=1).join(scores[metrics], how="left")
    strict = {m: (bacc.get(m) or {}).get("procedure") == "aggrefact" for m in metrics}
    return unified.recall_by_type(frame, metrics, thresholds, strict=strict)


def _holm_correlations(correlations: dict | None) -> dict | None:
    """Holm over the metrics, separately for each correlation coefficient's p-values."""
    if not correlations:
        return None
    metrics = list(correlations)
    out: dict[str, dict] = {m: {} for m in metrics}
    for key in ("pearson_p", "spearman_p", "kendall_p"):
        values = [correlations[m].get(key) for m in metrics]
        if all(v is None for v in values):
            continue
        for m, adjusted in zip(metrics, holm(values), strict=True):
            out[m][key] = adjusted
    return out


def benchmark_balanced_accuracy(campaign, human: pd.DataFrame, scores: pd.DataFrame, metrics: list[str]) -> dict | None:
    """Per source dataset (``Document.metadata["benchmark"]``, set by the AggreFact importers)."""
    if human.empty or not metrics:
        return None
    benchmarks = selectors.summary_benchmarks(campaign)
    frame = human[["split"]].join(benchmarks, how="inner")
    if frame.empty:
        return None
    frame = frame.assign(label=human["Factuality"].reindex(frame.index) >= 1.0).join(scores[[m for m in metrics if m in scores]], how="left")
    out: dict[str, dict] = {}
    for metric in metrics:
        if metric not in frame:
            continue
        per_dataset: dict[str, dict] = {}
        for benchmark, sub in frame[frame[metric].notna()].groupby("benchmark", sort=True):
            test = sub[sub["split"] == "test"] if (sub["split"] == "test").any() else sub
            dev = sub[sub["split"] == "valid"]
            # "exceeds 0.5": the least threshold above 0.5 under the ``score >= threshold`` rule
            fixed = evaluate_threshold(test[metric].to_numpy(), test["label"].to_numpy(), float(np.nextafter(LLM_AGGREFACT_THRESHOLD, 1.0)))
            tuned_threshold = best_threshold(dev[metric], dev["label"]) if len(dev) else None
            tuned = evaluate_threshold(test[metric].to_numpy(), test["label"].to_numpy(), tuned_threshold) if tuned_threshold is not None else None
            per_dataset[str(benchmark)] = {
                "n": len(test), "fixed_threshold": fixed,
                "dev_tuned": None if tuned is None else {**tuned, "threshold": tuned_threshold},
            }
        fixed_values = [v["fixed_threshold"]["balanced_accuracy"] for v in per_dataset.values()]
        tuned_values = [(v["dev_tuned"] or {}).get("balanced_accuracy") for v in per_dataset.values()]
        out[metric] = {
            "per_dataset": per_dataset,
            "average_fixed": float(np.mean(fixed_values)) if fixed_values and None not in fixed_values else None,
            "average_dev_tuned": float(np.mean(tuned_values)) if tuned_values and None not in tuned_values else None,
        }
    return out or None


def aggrefact_sections(
    campaign, *, human: pd.DataFrame, scores: pd.DataFrame, frame: pd.DataFrame, metrics: list[str], compared: list[str],
    partial: bool, correlations: dict | None, williams: dict | None, bacc: dict | None, pairs_meta: dict | None = None,
    judgements: pd.DataFrame | None = None,
) -> dict:
    """Every section of this module (see the module doc); a section without data is ``None``."""
    return {
        "unified_taxonomy": unified_taxonomy_section(human, judgements),
        "detector_recall": detector_recall_section(human, scores, compared, bacc, judgements),
        "system_level_correlations": system_level_correlation(frame, "Factuality", metrics, by=("system", "dataset")) if metrics else None,
        "correlation_differences": bootstrap_difference_matrix(frame, "Factuality", compared, partial=partial) if len(compared) >= 2 else None,
        "correlations_holm": _holm_correlations(correlations),
        "williams_holm": holm_matrix(williams) if williams else None,
        "benchmark_balanced_accuracy": benchmark_balanced_accuracy(campaign, human, scores, compared),
        "pairs_by_unified_type": unified.pair_consistency_by_type(pairs_meta),
    }
