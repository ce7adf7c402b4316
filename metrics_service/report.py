"""The analysis report of a campaign: agreement, error distribution, metric meta-evaluation.

Public API (used by the ``report`` management command, the Celery task, the dashboard and the REST API)::

    build_report(campaign, *, split="all", dataset=None, system=None, partial=True) -> dict
    get_or_compute_report(campaign, **same_options) -> dict     # cached per campaign state
    load_analysis_data(campaign, ...) -> AnalysisData           # the per-summary frames behind the report

``campaign`` is a ``Campaign`` or its slug. The report is plain JSON data (no NaN). Statistics are defined
in ``metrics_service.stats`` and documented in ``docs/analysis.md``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import pandas as pd
from django.core.cache import cache

from annotate.frank.typology import CODES, GROUPS
from annotate.models import Campaign, Dataset
from metrics_service import selectors
from metrics_service.selectors import Filters
from metrics_service.stats import (
    balanced_accuracy_report,
    category_agreement,
    category_confusion,
    correlation,
    error_distribution,
    expert_agreement,
    factual_agreement,
    metric_correlations,
    pair_statistics,
    summary_human_scores,
    williams_matrix,
)
from metrics_service.stats._util import jsonable
from metrics_service.stats.label_aggregation import check_method
from metrics_service.stats.label_aggregation import summary_scores as aggregated_summary_scores
from metrics_service.label_reliability import label_aggregation_section

REPORT_VERSION = 1
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


def _human_table(summaries: pd.DataFrame, judgements: pd.DataFrame, aggregation: str = "majority") -> pd.DataFrame:
    """Per-summary human scores: from judgements (labels aggregated by ``aggregation``) where a summary has any, else imported ``human_scores``."""
    judged = summaries["summary_id"].isin(judgements["summary_id"]) if not judgements.empty else pd.Series(False, index=summaries.index)
    collected = aggregated_summary_scores(judgements, aggregation) if not judgements.empty else pd.DataFrame()
    imported = selectors.imported_human_scores(summaries[~judged])
    parts = [frame for frame in (collected, imported) if not frame.empty]
    scores = pd.concat(parts) if parts else pd.DataFrame(columns=["Factuality"])
    meta = summaries.set_index("summary_id")[["system", "dataset", "split", "group"]]
    table = meta.join(scores, how="inner")
    return table[table["Factuality"].notna()]


def load_analysis_data(
    campaign: Campaign | str, *, split: str = "all", dataset: str | None = None, system: str | None = None, aggregation: str = "majority"
) -> AnalysisData:
    """Load the frames behind a report (raises ``ReportError`` on bad options)."""
    campaign = resolve_campaign(campaign)
    filters = make_filters(split, dataset, system)
    summaries = selectors.summaries_frame(campaign, filters)
    judgements = selectors.judgements_frame(campaign, filters)
    human = _human_table(summaries, judgements, aggregation)
    scores, info = selectors.scores_frame(campaign)
    data = AnalysisData(
        campaign=campaign, filters=filters, human=human, judgements=judgements,
        experts=selectors.experts_frame(campaign, filters), scores=scores, metric_info=info,
        pairs=selectors.pairs_frame(campaign, filters), aggregation=aggregation,
    )
    if not human.empty and not scores.empty:
        joined = human[[]].join(scores, how="left")
        data.metrics = [m for m in scores.columns if joined[m].notna().sum() >= MIN_ROWS_FOR_METRIC]
    return data


def _correlation_frame(data: AnalysisData) -> pd.DataFrame:
    return data.human.join(data.scores[data.metrics], how="left") if data.metrics else data.human


def _correlations(frame: pd.DataFrame, metrics: list[str], partial: bool, human: str = "Factuality") -> dict:
    groups = frame["group"].tolist()
    return {m: correlation(frame[human], frame[m], groups, partial=partial) for m in metrics}


def _ablation(frame: pd.DataFrame, metrics: list[str], partial: bool) -> dict | None:
    """Drop in Pearson correlation when one category (or group) is flipped to "no error" (FRANK Figure 5)."""
    flips = [c for c in [*CODES, *GROUPS] if f"Flip_{c}" in frame and frame[f"Flip_{c}"].notna().any()]
    if not metrics or not flips:
        return None
    groups = frame["group"].tolist()
    out = {}
    for metric in metrics:
        base = correlation(frame["Factuality"], frame[metric], groups, partial=partial)["pearson"]
        entry: dict = {"base": base, "by_category": {}, "by_group": {}}
        for name in flips:
            flipped = correlation(frame[f"Flip_{name}"], frame[metric], groups, partial=partial)["pearson"]
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


def _balanced_accuracy(campaign: Campaign, data: AnalysisData, metrics: list[str]) -> dict | None:
    if not metrics:
        return None
    # Threshold tuning needs the validation split: take every split of the same dataset/system filter.
    source = data if data.filters.split == "all" else load_analysis_data(campaign, dataset=data.filters.dataset, system=data.filters.system, aggregation=data.aggregation)
    if source.human.empty:
        return None
    frame = source.human[["system", "dataset", "split"]].assign(label=source.human["Factuality"] >= 1.0)
    frame = frame.join(source.scores[[m for m in metrics if m in source.scores]], how="left")
    return balanced_accuracy_report(frame, [m for m in metrics if m in frame])


def build_report(
    campaign: Campaign | str, *, split: str = "all", dataset: str | None = None, system: str | None = None, partial: bool = True,
    aggregation: str = "majority",
) -> dict:
    """Compute the full analysis report of ``campaign`` (a ``Campaign`` or slug).

    Options: ``split`` ("all", "valid" or "test"; "all" includes documents without a split), ``dataset``
    ("cnndm", "xsum", "other" or None for all), ``system`` (one system name or None) and ``partial``
    (correlations partial on system x dataset, FRANK's default; False for plain correlations).

    Returns a JSON-ready dict with the keys ``campaign, options, counts, agreement, human_factuality,
    error_distribution, error_distribution_by_dataset, confusion, correlations, metric_correlations,
    williams, ablation, meta_evaluation, meta_evaluation_significance, balanced_accuracy,
    missing_scores, metrics``; a section without data is ``None``. Raises ``ReportError`` on bad options.
    """
    campaign = resolve_campaign(campaign)
    data = load_analysis_data(campaign, split=split, dataset=dataset, system=system, aggregation=aggregation)
    frame = _correlation_frame(data)
    metrics = data.metrics
    human = data.human
    correlations = _correlations(frame, metrics, partial) if metrics else None
    pair_metrics = [m for m in data.scores.columns if not data.pairs.empty and data.pairs["edited_id"].isin(data.scores[m].dropna().index).any()]
    pairs = pair_statistics(data.pairs, data.scores, pair_metrics) if pair_metrics else None
    by_dataset = None
    if not human.empty:
        by_dataset = {str(ds): error_distribution(sub) for ds, sub in human.groupby("dataset", sort=True)}
    report = {
        "campaign": campaign.slug,
        "kind": campaign.kind,
        "status": campaign.status,
        "report_version": REPORT_VERSION,
        "options": {"split": split, "dataset": dataset, "system": system, "partial": partial, "aggregation": aggregation},
        "counts": selectors.campaign_counts(campaign),
        "n_human_rated": len(human),
        "agreement": _agreement(data),
        "human_factuality": (
            {str(s): float(v) for s, v in human.groupby("system")["Factuality"].mean().items()} if not human.empty else None
        ),
        "error_distribution": error_distribution(human) if not human.empty else None,
        "error_distribution_by_dataset": by_dataset,
        "confusion": category_confusion(data.judgements) if not data.judgements.empty else None,
        "correlations": correlations,
        "metric_correlations": metric_correlations(frame, metrics, partial=partial) if len(metrics) >= 2 else None,
        "williams": williams_matrix(frame, "Factuality", metrics, partial=partial) if len(metrics) >= 2 else None,
        "ablation": _ablation(frame, metrics, partial),
        "meta_evaluation": pairs["metrics"] if pairs else None,
        "meta_evaluation_significance": pairs["significance"] if pairs else None,
        "balanced_accuracy": _balanced_accuracy(campaign, data, metrics),
        "missing_scores": _missing_scores(data) if not data.scores.empty else None,
        "metrics": data.metric_info or None,
        "label_aggregation": label_aggregation_section(campaign, data.judgements),  # issue 17.4
    }
    return jsonable(report)


def report_cache_key(campaign: Campaign, **options) -> str:
    """Cache key from the campaign's state (counts, max ids, change times) and the report options."""
    payload = json.dumps(
        {"v": REPORT_VERSION, "state": selectors.state_fingerprint(campaign), "options": options}, sort_keys=True, default=str
    )
    return f"factlab:report:{campaign.pk}:{hashlib.sha1(payload.encode()).hexdigest()}"


def normalize_options(
    split: str = "all", dataset: str | None = None, system: str | None = None, partial: bool = True, aggregation: str = "majority"
) -> dict:
    make_filters(split, dataset, system)
    try:
        check_method(aggregation)
    except ValueError as exc:
        raise ReportError(str(exc)) from exc
    return {"split": split, "dataset": dataset or None, "system": system or None, "partial": bool(partial), "aggregation": aggregation}


def get_or_compute_report(campaign: Campaign | str, **options) -> dict:
    """``build_report`` through Django's cache; a new judgement, score, edit review or label invalidates it.

    Accepts the same keyword options as :func:`build_report`.
    """
    campaign = resolve_campaign(campaign)
    try:
        options = normalize_options(**options)
    except TypeError as exc:
        raise ReportError(f"bad report option: {exc}") from exc
    key = report_cache_key(campaign, **options)
    report = cache.get(key)
    if report is None:
        report = build_report(campaign, **options)
        cache.set(key, report, CACHE_SECONDS)
    return report


__all__ = ["AnalysisData", "ReportError", "build_report", "get_or_compute_report", "load_analysis_data", "report_cache_key"]
