"""The analysis report of a campaign: agreement, error distribution, metric meta-evaluation.

Public API (used by the ``report`` management command, the Celery task, the dashboard and the REST API)::

    build_report(campaign, *, split="all", dataset=None, system=None, partial=True, spearman="residuals",
                 auc_references="per_pair", include_incomplete=False, progress=None) -> dict
    get_or_compute_report(campaign, **same_options) -> dict     # cached per campaign state
    cached_report(campaign, **same_options) -> dict | None      # the cached report or None (no computing)
    # the API's jobs (one per campaign and options, a limit per user): metrics_service.report_jobs.request_report
    load_analysis_data(campaign, ...) -> AnalysisData           # the per-summary frames behind the report

Over 400 lines on purpose: the report is one document whose sections share the loaded data and the
progress steps; each section is a short function and every statistic lives in ``metrics_service.stats``.

``campaign`` is a ``Campaign`` or its slug. The report is plain JSON data (no NaN). Statistics are defined
in ``metrics_service.stats`` and documented in ``docs/analysis.md``.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd
from django.core.cache import cache
from django.utils import timezone

from annotate.models import Campaign, Dataset, MetricSource
from annotate.protocols import protocol_for
from metrics_service import selectors
from metrics_service.label_reliability import label_aggregation_section
from metrics_service.report_aggrefact import DEFINITIONS as AGGREFACT_DEFINITIONS
from metrics_service.report_aggrefact import aggrefact_sections
from metrics_service.selectors import Filters
from metrics_service.stats import (
    balanced_accuracy_report,
    category_agreement,
    category_confusion,
    error_distribution,
    expert_agreement,
    factual_agreement,
    metric_correlations,
    pair_statistics,
    williams_matrix,
)
from metrics_service.stats._util import jsonable
from metrics_service.stats.annotators import annotator_agreement
from metrics_service.stats.correlation import SPEARMAN_DEFINITIONS, correlation
from metrics_service.stats.label_aggregation import check_method, confident_summaries
from metrics_service.stats.label_aggregation import summary_scores as aggregated_summary_scores
from metrics_service.stats.minimal_pairs import AUC_REFERENCES
from metrics_service.stored_figures import report_figures_name, store_figures
from taxonomies.frank import CODES, GROUPS

# What the report says it computed (shown by the text report and the dashboard).
DEFINITIONS = {
    "partial": "residuals of OLS on one-hot system x dataset (= group demeaning), then Pearson (FRANK)",
    "spearman": {
        "residuals": "Spearman of the residuals of the raw values (FRANK's released evaluate.py)",
        "ranks": "Spearman as the Pearson of residualised ranks (values ranked first: rank-then-residualise)",
    },
    "auc_references": {
        "per_pair": "each pair's reference is one positive, once per pair (BUMP)",
        "once": "each distinct reference is one positive per row",
    },
    "balanced_accuracy": "AggreFact's procedure: candidate thresholds at the percentiles 0, 0.2, ..., 99.8 of the "
                         "validation scores, consistent when the score is strictly above, last best threshold on ties; "
                         "per dataset, one threshold tuned on its validation split; per system category (Table 4), one "
                         "threshold per source benchmark x dataset x category, averaged over benchmarks weighted by test "
                         "counts; Table 5, one threshold on the SOTA validation summaries per dataset; 95% intervals from "
                         "1000 subsamples of 80% of the test summaries without replacement; beside them, labelled pooled, "
                         "one single threshold over all datasets (it also rewards score differences between datasets)",
    "intervals": "95%: Fisher z and percentile bootstrap (1000 resamples, seed 0) for correlations, Wilson for "
                 "consistency, bootstrap of pairs for ROC AUC, 80% subsamples of test summaries for balanced accuracy",
}
ProgressCallback = Callable[[int, int, str], None]
REPORT_VERSION = 4
CACHE_SECONDS = 7 * 24 * 3600
MIN_ROWS_FOR_METRIC = 3


class ReportError(ValueError):
    """Bad report options or an unknown campaign; the message names what is wrong."""


@dataclass
class AnalysisData:
    """What the statistics read, for one campaign and filter."""

    campaign: Campaign
    filters: Filters
    human: pd.DataFrame  # per summary: system, dataset, split, group, Factuality, categories, Flip_*
    judgements: pd.DataFrame
    experts: pd.DataFrame
    scores: pd.DataFrame  # wide, summary id index, oriented higher = more faithful
    metric_info: dict[str, dict]
    pairs: pd.DataFrame
    metrics: list[str] = field(default_factory=list)  # metrics with enough scores on human-rated summaries
    aggregation: str = "majority"  # how sentence labels became ``human`` (stats.label_aggregation)
    min_label_posterior: float | None = None  # judged summaries with a less certain sentence label were left out
    label_confidence: dict | None = None  # what that option kept


def resolve_campaign(campaign: Campaign | str) -> Campaign:
    if isinstance(campaign, Campaign):
        return campaign
    found = Campaign.objects.filter(slug=campaign).first()
    if found is None:
        raise ReportError(f"no campaign with slug {campaign!r}")
    return found


def make_filters(split: str = "all", dataset: str | None = None, system: str | None = None) -> Filters:
    if split not in selectors.SPLITS:
        raise ReportError(f"unknown split {split!r}; expected one of {', '.join(selectors.SPLITS)}")
    if dataset is not None and dataset not in Dataset.values:
        raise ReportError(f"unknown dataset {dataset!r}; expected one of {', '.join(Dataset.values)}")
    return Filters(split=split, dataset=dataset or None, system=system or None)


def _human_table(summaries: pd.DataFrame, judgements: pd.DataFrame, aggregation: str = "majority",
                 min_label_posterior: float | None = None) -> pd.DataFrame:
    """Per-summary human scores: from judgements (labels aggregated by ``aggregation``) where a summary has any, else imported ``human_scores``.

    ``min_label_posterior``: judged summaries with a sentence label less certain than this are left out
    (they do not fall back to imported scores)."""
    judged = summaries["summary_id"].isin(judgements["summary_id"]) if not judgements.empty else pd.Series(False, index=summaries.index)
    collected = aggregated_summary_scores(judgements, aggregation) if not judgements.empty else pd.DataFrame()
    if min_label_posterior is not None and not collected.empty:
        collected = collected[collected.index.isin(confident_summaries(judgements, aggregation, min_label_posterior))]
    imported = selectors.imported_human_scores(summaries[~judged])
    parts = [frame for frame in (collected, imported) if not frame.empty]
    scores = pd.concat(parts) if parts else pd.DataFrame(columns=["Factuality"])
    meta = summaries.set_index("summary_id")[["system", "dataset", "split", "group", "sort_key"]]
    table = meta.join(scores, how="inner").sort_values("sort_key", kind="stable")
    return table[table["Factuality"].notna()]


def human_and_metrics(campaign: Campaign, metrics: list[str], *, split: str = "all", dataset: str | None = None,
                      system: str | None = None) -> pd.DataFrame:
    """Per human-rated summary: system, ``Factuality`` and a column per metric (the dashboard's scatters; NaN
    for a metric without scores), reading only those metrics' scores."""
    filters = make_filters(split, dataset, system)
    human = _human_table(selectors.summaries_frame(campaign, filters), selectors.judgements_frame(campaign, filters))
    scores, _ = selectors.scores_frame(campaign, metrics=sorted({metric.split("[", 1)[0] for metric in metrics}))
    return human.join(scores.reindex(columns=metrics), how="left")


def load_analysis_data(
    campaign: Campaign | str, *, split: str = "all", dataset: str | None = None, system: str | None = None, aggregation: str = "majority",
    min_label_posterior: float | None = None,
) -> AnalysisData:
    """Load the frames behind a report (raises ``ReportError`` on bad options)."""
    campaign = resolve_campaign(campaign)
    filters = make_filters(split, dataset, system)
    summaries = selectors.summaries_frame(campaign, filters)
    judgements = selectors.judgements_frame(campaign, filters)
    human = _human_table(summaries, judgements, aggregation, min_label_posterior)
    confidence = None
    if min_label_posterior is not None:
        judged_ids = set(judgements["summary_id"]) if not judgements.empty else set()
        kept = int(human.index.isin(judged_ids).sum())
        confidence = {"min_label_posterior": min_label_posterior, "judged_summaries_kept": kept, "judged_summaries_left_out": len(judged_ids) - kept}
    scores, info = selectors.scores_frame(campaign)
    data = AnalysisData(
        campaign=campaign, filters=filters, human=human, judgements=judgements,
        experts=selectors.experts_frame(campaign, filters), scores=scores, metric_info=info,
        pairs=selectors.pairs_frame(campaign, filters), aggregation=aggregation,
        min_label_posterior=min_label_posterior, label_confidence=confidence,
    )
    if not human.empty and not scores.empty:
        joined = human[[]].join(scores, how="left")
        data.metrics = [m for m in scores.columns if joined[m].notna().sum() >= MIN_ROWS_FOR_METRIC]
    return data


def _correlation_frame(data: AnalysisData) -> pd.DataFrame:
    return data.human.join(data.scores[data.metrics], how="left") if data.metrics else data.human


def _correlations(
    frame: pd.DataFrame, metrics: list[str], partial: bool, spearman: str, status: dict[str, dict], kendall: bool = False
) -> dict:
    groups = frame["group"].tolist()
    out = {}
    for m in metrics:
        entry = correlation(frame["Factuality"], frame[m], groups, partial=partial, spearman=spearman, intervals=True, kendall=kendall)
        entry["status"] = status.get(m, {}).get("status", "complete")
        out[m] = entry
    return out


def _ablation(frame: pd.DataFrame, metrics: list[str], partial: bool) -> dict | None:
    """Drop in Pearson correlation when one category (or group) is flipped to "no error" (FRANK Figure 5)."""
    flips = [c for c in [*CODES, *GROUPS] if f"Flip_{c}" in frame and frame[f"Flip_{c}"].notna().any()]
    if not metrics or not flips:
        return None
    groups = frame["group"].tolist()
    out = {}
    for metric in metrics:
        base = correlation(frame["Factuality"], frame[metric], groups, partial=partial, with_spearman=False)["pearson"]
        entry: dict = {"base": base, "by_category": {}, "by_group": {}}
        for name in flips:
            flipped = correlation(frame[f"Flip_{name}"], frame[metric], groups, partial=partial, with_spearman=False)["pearson"]
            drop = None if base is None or flipped is None else base - flipped
            entry["by_group" if name in GROUPS else "by_category"][name] = drop
        out[metric] = entry
    return out


def _missing_scores(data: AnalysisData) -> dict[str, dict[str, int]]:
    """Per metric: human-rated summaries and pair members lacking a score (skipped by the statistics)."""
    out = {}
    pair_ids = pd.unique(pd.concat([data.pairs["reference_id"], data.pairs["edited_id"]])) if not data.pairs.empty else []
    for metric in data.scores.columns:
        column = data.scores[metric]
        out[metric] = {
            "human_rated": int(data.human.index.to_series().map(column).isna().sum()) if not data.human.empty else 0,
            "pairs": int(pd.Series(pair_ids).map(column).isna().sum()) if len(pair_ids) else 0,
        }
    return out


def _agreement(data: AnalysisData) -> dict | None:
    judgements = data.judgements
    factual = factual_agreement(judgements)
    if factual is None:
        return None
    has_categories = judgements["categories"].map(lambda c: bool(c)).any()
    return {
        "factual": factual,
        "category": category_agreement(judgements) if has_categories else None,
        "expert": expert_agreement(judgements, data.experts),
    }


def _metric_status(data: AnalysisData, jobs: dict[str, dict]) -> dict[str, dict]:
    """Per metric column: coverage of the human-rated summaries and of the pairs, its job, and a status.

    ``status`` is ``"running"`` while its scoring job is pending or running, ``"partial"`` when it scores
    fewer human-rated summaries (or pair members) than the campaign has, else ``"complete"``.
    """
    out = {}
    human_ids = data.human.index
    pair_ids = pd.unique(pd.concat([data.pairs["reference_id"], data.pairs["edited_id"]])) if not data.pairs.empty else []
    for column, info in data.metric_info.items():
        values = data.scores[column]
        n_human = int(human_ids.to_series().map(values).notna().sum()) if len(human_ids) else 0
        n_pair_members = int(pd.Series(pair_ids).map(values).notna().sum()) if len(pair_ids) else 0
        job = jobs.get(info["config_key"]) if info["source"] == MetricSource.COMPUTED else None
        scored_any = n_human > 0 or n_pair_members > 0
        if job and job["status"] in ("pending", "running"):
            status = "running"
        elif (n_human and n_human < len(human_ids)) or (n_pair_members and n_pair_members < len(pair_ids)) or not scored_any:
            status = "partial"
        else:
            status = "complete"
        entry = {
            **info, "status": status, "n_human_rated": n_human, "of_human_rated": len(human_ids),
            "n_pair_members": n_pair_members, "of_pair_members": len(pair_ids), "job": job,
        }
        if info["source"] == MetricSource.COMPUTED:
            entry.update(selectors.scorer_implementation(info["metric"]))
            entry["config"] = job["config"] if job else None
        out[column] = entry
    return out


def _balanced_accuracy(campaign: Campaign, data: AnalysisData, metrics: list[str]) -> dict | None:
    if not metrics:
        return None
    # Threshold tuning needs the validation split: take every split of the same dataset/system filter.
    source = data if data.filters.split == "all" else load_analysis_data(campaign, dataset=data.filters.dataset, system=data.filters.system, aggregation=data.aggregation, min_label_posterior=data.min_label_posterior)
    if source.human.empty:
        return None
    frame = source.human[["system", "dataset", "split"]].assign(label=source.human["Factuality"] >= 1.0)
    frame = frame.join(source.scores[[m for m in metrics if m in source.scores]], how="left")
    # AggreFact tunes a threshold per source benchmark too (kept by the AggreFact importers; one when absent).
    frame = frame.join(selectors.summary_benchmarks(campaign), how="left")
    return balanced_accuracy_report(frame, [m for m in metrics if m in frame])


def _aggregation_definition(aggregation: str, data: AnalysisData) -> str:
    """How the human summary scores were made; says so when ``aggregation`` had no labels to work on."""
    if data.judgements.empty and aggregation != "majority":
        return (
            f"{aggregation} not applied: no per-worker sentence labels in what the filters cover; the human "
            "scores are the imported summary scores"
        )
    if aggregation == "majority":
        return "FRANK summary score from the majority label of each sentence (FRANK)"
    return f"FRANK summary score from {aggregation} sentence labels (stats.label_aggregation)"


def build_report(
    campaign: Campaign | str,
    *,
    split: str = "all",
    dataset: str | None = None,
    system: str | None = None,
    partial: bool = True,
    aggregation: str = "majority",
    spearman: str = "residuals",
    auc_references: str = "per_pair",
    include_incomplete: bool = False,
    kendall: bool = False,
    min_label_posterior: float | None = None,
    progress: ProgressCallback | None = None,
) -> dict:
    """Compute the full analysis report of ``campaign`` (a ``Campaign`` or slug).

    Options: ``split`` ("all", "valid" or "test"; "all" includes documents without a split), ``dataset``
    ("cnndm", "xsum", "other" or None for all), ``system`` (one system name or None), ``partial``
    (correlations partial on system x dataset, FRANK's default; False for plain correlations),
    ``spearman`` (partial Spearman definition: "residuals", FRANK's, or "ranks"), ``auc_references``
    (BUMP per-type AUC: "per_pair", BUMP's, or "once") and ``include_incomplete`` (metrics whose job runs
    or whose coverage is partial enter the comparisons too), ``kendall`` (Kendall tau-b beside Pearson and
    Spearman in the correlation section). ``progress(step, total, label)`` is called before each section.

    Returns a JSON-ready dict with the keys ``campaign, options, definitions, counts, agreement,
    human_factuality, error_distribution, error_distribution_by_dataset, confusion, correlations,
    metric_correlations, williams, ablation, meta_evaluation, meta_evaluation_significance,
    meta_evaluation_counts, balanced_accuracy, missing_scores, metrics, excluded_metrics`` and the sections of
    ``report_aggrefact`` (unified_taxonomy, detector_recall, system_level_correlations,
    correlation_differences, correlations_holm, williams_holm, benchmark_balanced_accuracy); a section
    without data is ``None``. Raises ``ReportError`` on bad options.
    """
    if spearman not in SPEARMAN_DEFINITIONS:
        raise ReportError(f"unknown spearman definition {spearman!r}; expected one of {', '.join(SPEARMAN_DEFINITIONS)}")
    if auc_references not in AUC_REFERENCES:
        raise ReportError(f"unknown auc_references {auc_references!r}; expected one of {', '.join(AUC_REFERENCES)}")
    steps = ["loading data", "agreement", "correlations", "Williams tests", "ablation", "minimal pairs", "balanced accuracy"]

    def step(label: str) -> None:
        if progress is not None:
            progress(steps.index(label), len(steps), label)

    step("loading data")
    campaign = resolve_campaign(campaign)
    data = load_analysis_data(campaign, split=split, dataset=dataset, system=system, aggregation=aggregation, min_label_posterior=min_label_posterior)
    status = _metric_status(data, selectors.scoring_jobs_by_config(campaign)) if data.metric_info else {}
    frame = _correlation_frame(data)
    metrics = data.metrics
    # Comparisons (Williams, metric-metric, ablation, significance, detection) only take complete metrics.
    compared = [m for m in metrics if include_incomplete or status.get(m, {}).get("status") == "complete"]
    human = data.human
    step("agreement")
    agreement = _agreement(data)
    step("correlations")
    correlations = _correlations(frame, metrics, partial, spearman, status, kendall) if metrics else None
    step("Williams tests")
    williams = williams_matrix(frame, "Factuality", compared, partial=partial) if len(compared) >= 2 else None
    metric_corr = metric_correlations(frame, compared, partial=partial) if len(compared) >= 2 else None
    step("ablation")
    ablation = _ablation(frame, compared, partial)
    step("minimal pairs")
    pair_metrics = [m for m in data.scores.columns if not data.pairs.empty and data.pairs["edited_id"].isin(data.scores[m].dropna().index).any()]
    pair_compared = [m for m in pair_metrics if include_incomplete or status.get(m, {}).get("status") == "complete"]
    pairs = pair_statistics(data.pairs, data.scores, pair_metrics, auc_references=auc_references, compare=pair_compared) if pair_metrics else None
    step("balanced accuracy")
    excluded = sorted({*metrics, *pair_metrics} - {*compared, *pair_compared})
    report = {
        "campaign": campaign.slug,
        "kind": campaign.kind,
        "status": campaign.status,
        "report_version": REPORT_VERSION,
        "options": {
            "split": split, "dataset": dataset, "system": system, "partial": partial, "spearman": spearman,
            "auc_references": auc_references, "include_incomplete": include_incomplete,
            "aggregation": aggregation, "kendall": kendall, "min_label_posterior": min_label_posterior,
        },
        "definitions": _definitions(data, partial=partial, spearman=spearman, auc_references=auc_references, aggregation=aggregation,
                                    min_label_posterior=min_label_posterior),
        "counts": selectors.campaign_counts(campaign, data.filters),  # of what the filters cover
        "n_human_rated": len(human),
        "label_confidence": data.label_confidence,  # how many summaries min_label_posterior kept (all correlations use them)
        "agreement": agreement,
        **_human_sections(data),
        "correlations": correlations,
        "metric_correlations": metric_corr,
        "williams": williams,
        "ablation": ablation,
        "meta_evaluation": pairs["metrics"] if pairs else None,
        "meta_evaluation_significance": pairs["significance"] if pairs else None,
        "meta_evaluation_counts": pairs["pair_counts"] if pairs else None,
        "balanced_accuracy": _balanced_accuracy(campaign, data, compared),
        "missing_scores": _missing_scores(data) if not data.scores.empty else None,
        "metrics": status or None,
        "excluded_metrics": {m: status[m]["status"] for m in excluded if m in status} or None,
        "label_aggregation": label_aggregation_section(campaign, data.judgements),
        "llm_annotators": llm_annotator_section(campaign, data),
    }
    report["definitions"].update(AGGREFACT_DEFINITIONS)
    report.update(aggrefact_sections(
        campaign, human=human, scores=data.scores, frame=frame, metrics=metrics, compared=compared, partial=partial,
        correlations=correlations, williams=williams, bacc=report["balanced_accuracy"], pairs_meta=report["meta_evaluation"],
        judgements=data.judgements,
    ))
    # The campaign protocol's own sections (answers that are not sentence judgements), only where it has some.
    sections = [section.as_dict() for section in protocol_for(campaign.kind).report_sections(campaign)]
    if sections:
        report["sections"] = sections
    return jsonable(report)


def _definitions(data: AnalysisData, *, partial: bool, spearman: str, auc_references: str, aggregation: str,
                 min_label_posterior: float | None) -> dict:
    """What the report's figures mean under these options (the report's ``definitions``)."""
    return {
        "partial": DEFINITIONS["partial"] if partial else "plain correlations (no confounder)",
        "spearman": DEFINITIONS["spearman"][spearman] if partial else "scipy Spearman of the raw values",
        "auc_references": DEFINITIONS["auc_references"][auc_references],
        "balanced_accuracy": DEFINITIONS["balanced_accuracy"],
        "intervals": DEFINITIONS["intervals"],
        "aggregation": _aggregation_definition(aggregation, data),
        "label_confidence": (
            "every judged summary" if min_label_posterior is None
            else f"only judged summaries whose every sentence label ({aggregation}) has a posterior >= {min_label_posterior}"
        ),
    }


def _human_sections(data: AnalysisData) -> dict:
    """The human side of the report: mean factuality per system, the error distribution (all, and per dataset)
    and the confusion between categories; each ``None`` without human ratings (judgements for the last)."""
    human = data.human
    return {
        "human_factuality": (
            {str(s): float(v) for s, v in human.groupby("system")["Factuality"].mean().items()} if not human.empty else None
        ),
        "error_distribution": error_distribution(human) if not human.empty else None,
        "error_distribution_by_dataset": (
            {str(ds): error_distribution(sub) for ds, sub in human.groupby("dataset", sort=True)} if not human.empty else None
        ),
        "confusion": category_confusion(data.judgements) if not data.judgements.empty else None,
    }


def llm_annotator_section(campaign: Campaign, data: AnalysisData) -> dict | None:
    """Model annotators (LLM judges doing the FRANK task) against the humans; None without model judgements."""
    model, names = selectors.model_judgements_frame(campaign, data.filters)
    if model.empty:
        return None
    return annotator_agreement(data.judgements, model, names)


def report_cache_key(campaign: Campaign, **options) -> str:
    """Cache key from the campaign's state (counts, max ids, change times) and the report options."""
    payload = json.dumps(
        {"v": REPORT_VERSION, "state": selectors.state_fingerprint(campaign), "options": options}, sort_keys=True, default=str
    )
    return f"factlab:report:{campaign.pk}:{hashlib.sha1(payload.encode()).hexdigest()}"


def normalize_options(
    split: str = "all", dataset: str | None = None, system: str | None = None, partial: bool = True,
    spearman: str = "residuals", auc_references: str = "per_pair", include_incomplete: bool = False,
    aggregation: str = "majority", kendall: bool = False, min_label_posterior: float | None = None,
) -> dict:
    """Validated report options with defaults filled in (raises ``ReportError``)."""
    if min_label_posterior is not None and not 0.5 <= float(min_label_posterior) <= 1.0:
        raise ReportError(f"min_label_posterior must be in [0.5, 1], got {min_label_posterior}")
    make_filters(split, dataset, system)
    if spearman not in SPEARMAN_DEFINITIONS:
        raise ReportError(f"unknown spearman definition {spearman!r}; expected one of {', '.join(SPEARMAN_DEFINITIONS)}")
    if auc_references not in AUC_REFERENCES:
        raise ReportError(f"unknown auc_references {auc_references!r}; expected one of {', '.join(AUC_REFERENCES)}")
    try:
        check_method(aggregation)
    except ValueError as exc:
        raise ReportError(str(exc)) from exc
    return {
        "split": split, "dataset": dataset or None, "system": system or None, "partial": bool(partial),
        "spearman": spearman, "auc_references": auc_references, "include_incomplete": bool(include_incomplete),
        "aggregation": aggregation, "kendall": bool(kendall),
        "min_label_posterior": None if min_label_posterior is None else float(min_label_posterior),
    }


def checked_options(options: dict) -> dict:
    try:
        return normalize_options(**options)
    except TypeError as exc:
        raise ReportError(f"bad report option: {exc}") from exc


def cached_report(campaign: Campaign | str, **options) -> dict | None:
    """The cached report for the campaign's current state and these options, or ``None`` (never computes)."""
    campaign = resolve_campaign(campaign)
    return cache.get(report_cache_key(campaign, **checked_options(options)))


def get_or_compute_report(campaign: Campaign | str, *, progress: ProgressCallback | None = None, **options) -> dict:
    """``build_report`` through Django's cache; a new judgement, score, edit review or label invalidates it.
    A report built here is also stored as the campaign's latest with these options (``stored_figures``): the
    dashboard shows it, saying how fresh it is, while a newer one is computed.

    Accepts the same keyword options as :func:`build_report`.
    """
    campaign = resolve_campaign(campaign)
    options = checked_options(options)
    key = report_cache_key(campaign, **options)
    report = cache.get(key)
    if report is None:
        started = timezone.now()
        report = build_report(campaign, progress=progress, **options)
        cache.set(key, report, CACHE_SECONDS)
        store_figures(campaign, report_figures_name(options), state=key, data=report, started_at=started)
    return report


__all__ = [
    "AnalysisData", "ReportError", "build_report", "cached_report", "get_or_compute_report", "load_analysis_data",
    "normalize_options", "report_cache_key",
]
