"""Database -> pandas selectors for the analysis report (the only analysis module that touches Django).

Every selector takes a campaign and returns plain frames that ``metrics_service.stats`` consumes.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from django.db.models import Count, Max, Q

from annotate.models import (
    Campaign,
    Document,
    ExpertLabel,
    JudgementSource,
    MetricScore,
    MetricSource,
    SentenceJudgement,
    Summary,
)
from annotate.protocols import pair_verdicts, report_records
from annotate.services.independence import copy_groups
from taxonomies.frank import CODES, GROUPS, data_file_key

SPLITS = ("all", "valid", "test")
# Imported metrics are higher-is-better unless named here (case-insensitive): error or distance measures.
LOWER_IS_BETTER = frozenset({"ter", "wer", "cer", "perplexity", "ppl", "edit_distance"})


@dataclass(frozen=True)
class Filters:
    """Which summaries the report covers. ``split="all"`` includes documents without a split."""

    split: str = "all"
    dataset: str | None = None
    system: str | None = None

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"unknown split {self.split!r}; expected one of {', '.join(SPLITS)}")

    def summary_q(self, prefix: str = "") -> Q:
        q = Q()
        if self.split != "all":
            q &= Q(**{f"{prefix}document__split": self.split})
        if self.dataset:
            q &= Q(**{f"{prefix}document__dataset": self.dataset})
        if self.system:
            q &= Q(**{f"{prefix}system": self.system})
        return q


def campaign_counts(campaign: Campaign, filters: Filters | None = None) -> dict[str, int]:
    """Counts of the campaign's rows the ``filters`` cover (default: all); ``summaries`` excludes references,
    ``edits`` counts edited summaries; ``documents`` with a ``system`` filter: those with a summary by it.
    ``workers`` and ``judgements`` count people; model annotators' judgements are ``model_judgements``; the
    protocols' own answer rows follow ``edits`` under their names (``Protocol.report_records``, e.g. BUMP's
    ``edit_records``)."""
    filters = filters or Filters()
    summaries = Summary.objects.filter(filters.summary_q(), document__campaign=campaign)
    documents = Document.objects.filter(campaign=campaign)
    if filters.split != "all":
        documents = documents.filter(split=filters.split)
    if filters.dataset:
        documents = documents.filter(dataset=filters.dataset)
    if filters.system:
        documents = documents.filter(summaries__system=filters.system).distinct()
    all_judgements = SentenceJudgement.objects.filter(filters.summary_q("summary__"), summary__document__campaign=campaign)
    judgements = all_judgements.exclude(source=JudgementSource.MODEL)  # people's, as every human aggregate
    counts = {
        "documents": documents.count(),
        "summaries": summaries.filter(is_reference=False).count(),
        "systems": summaries.filter(is_reference=False, edited_from__isnull=True).values("system").distinct().count(),
        "workers": judgements.values("worker_id").distinct().count(),
        "judgements": judgements.count(),
        "model_judgements": all_judgements.filter(source=JudgementSource.MODEL).count(),
        "edits": summaries.filter(edited_from__isnull=False).count(),
    }
    for name, records in report_records(campaign).items():
        counts[name] = records.rows.filter(filters.summary_q(records.summary_path)).count()
    counts["expert_labels"] = ExpertLabel.objects.filter(filters.summary_q("summary__"), summary__document__campaign=campaign).count()
    counts["metric_scores"] = MetricScore.objects.filter(filters.summary_q("summary__"), summary__document__campaign=campaign).count()
    return counts


def state_fingerprint(campaign: Campaign) -> tuple:
    """Counts, max ids and last-change times of everything a report reads (for cache keys)."""
    parts: list = [campaign.pk, campaign.updated_at.isoformat() if campaign.updated_at else ""]
    queries = [
        (Summary.objects.filter(document__campaign=campaign), None),
        (SentenceJudgement.objects.filter(summary__document__campaign=campaign), "created_at"),
        (MetricScore.objects.filter(summary__document__campaign=campaign), "updated_at"),
        *((records.rows, records.changed_at or None) for records in report_records(campaign).values()),
        (ExpertLabel.objects.filter(summary__document__campaign=campaign), "created_at"),
    ]
    for queryset, stamp in queries:
        aggregates = {"n": Count("id"), "max_id": Max("id")}
        if stamp:
            aggregates["last"] = Max(stamp)
        values = queryset.aggregate(**aggregates)
        parts.extend(str(values.get(k)) for k in ("n", "max_id", "last"))
    return tuple(parts)


def summaries_frame(campaign: Campaign, filters: Filters) -> pd.DataFrame:
    """Non-reference, non-edited summaries: ``summary_id, document_id, system, dataset, split, group, human_scores,
    sort_key``, ordered by ``sort_key`` (document external id, system, summary external id).

    The order comes from the data, not from database ids, so bootstrap intervals are the same for the same
    data in any campaign and any import order.
    """
    rows = (
        Summary.objects.filter(document__campaign=campaign, is_reference=False, edited_from__isnull=True)
        .filter(filters.summary_q())
        .values_list("id", "document_id", "system", "document__dataset", "document__split", "human_scores",
                     "document__external_id", "external_id")
    )
    frame = pd.DataFrame(
        list(rows), columns=["summary_id", "document_id", "system", "dataset", "split", "human_scores", "document_key", "external_id"]
    )
    frame["group"] = frame["system"].astype(str) + "|" + frame["dataset"].astype(str)
    frame["sort_key"] = frame["document_key"].astype(str) + "\x1f" + frame["system"].astype(str) + "\x1f" + frame["external_id"].astype(str)
    return frame.sort_values("sort_key", kind="stable").reset_index(drop=True)


def judgements_frame(campaign: Campaign, filters: Filters, *, include_models: bool = False) -> pd.DataFrame:
    """``summary_id, sentence_index, worker_id, factual, categories, source`` of the filtered summaries.

    Human judgements only, unless ``include_models`` (model annotators' judgements have ``source="model"``).
    """
    queryset = SentenceJudgement.objects.filter(summary__document__campaign=campaign).filter(filters.summary_q("summary__"))
    if not include_models:
        queryset = queryset.exclude(source=JudgementSource.MODEL)
    rows = queryset.order_by("id").values_list("summary_id", "sentence_index", "worker_id", "factual", "categories", "source")
    frame = pd.DataFrame(list(rows), columns=["summary_id", "sentence_index", "worker_id", "factual", "categories", "source"])
    return count_copy_groups_once(frame, copy_groups(campaign))


def count_copy_groups_once(frame: pd.DataFrame, groups: dict[int, int]) -> pd.DataFrame:
    """A flagged group of workers (``annotate.services.independence``) is one vote per sentence: of its members'
    judgements of a sentence only the first submitted is kept, so copies add no weight to a label."""
    if frame.empty or not groups:
        return frame
    voter = frame["worker_id"].map(lambda w: groups.get(int(w), int(w)) if pd.notna(w) else w)
    keep = ~pd.DataFrame({"s": frame["summary_id"], "i": frame["sentence_index"], "v": voter}).duplicated(keep="first")
    return frame[keep.to_numpy()].reset_index(drop=True)


def model_judgements_frame(campaign: Campaign, filters: Filters) -> tuple[pd.DataFrame, dict[int, str]]:
    """The model annotators' judgements (as :func:`judgements_frame`) and their names by worker id."""
    rows = list(
        SentenceJudgement.objects.filter(summary__document__campaign=campaign, source=JudgementSource.MODEL)
        .filter(filters.summary_q("summary__"))
        .values_list("summary_id", "sentence_index", "worker_id", "factual", "categories", "source", "worker__external_id")
    )
    names = {row[2]: row[6] for row in rows}
    frame = pd.DataFrame([row[:6] for row in rows], columns=["summary_id", "sentence_index", "worker_id", "factual", "categories", "source"])
    return frame, names


def experts_frame(campaign: Campaign, filters: Filters) -> pd.DataFrame:
    rows = (
        ExpertLabel.objects.filter(summary__document__campaign=campaign)
        .filter(filters.summary_q("summary__"))
        .values_list("summary_id", "sentence_index", "expert", "factual")
    )
    return pd.DataFrame(list(rows), columns=["summary_id", "sentence_index", "expert", "factual"])


def imported_human_scores(summaries: pd.DataFrame) -> pd.DataFrame:
    """FRANK-style imported ``human_scores`` as a frame indexed by summary id with canonical column names.

    Columns: ``Factuality``, category codes (FRANK's ``Other`` becomes ``OtherE``), groups and ``Flip_*``.
    Summaries without an imported ``Factuality`` are left out.
    """
    keys = {"Factuality": "Factuality"}
    for code in CODES:
        keys[code] = data_file_key(code)
        keys[f"Flip_{code}"] = f"Flip_{data_file_key(code)}"
    for group in GROUPS:
        keys[group] = group
        keys[f"Flip_{group}"] = f"Flip_{group}"
    records = []
    for summary_id, scores in zip(summaries["summary_id"], summaries["human_scores"], strict=True):
        if isinstance(scores, dict) and isinstance(scores.get("Factuality"), (int, float)):
            records.append({"summary_id": summary_id, **{col: scores.get(key) for col, key in keys.items()}})
    frame = pd.DataFrame(records, columns=["summary_id", *keys])
    return frame.set_index("summary_id").astype(float)


def metric_direction(metric: str, source: str) -> int:
    """+1 when higher means more faithful. Computed metrics take their scorer's ``direction``."""
    if source == MetricSource.COMPUTED:
        from metrics_service.scorers import REGISTRY, scorer_class

        # Output names start with the registry name ("rouge2" -> rouge, "coco_sent" -> coco).
        for name in sorted(REGISTRY, key=len, reverse=True):
            if metric.lower().startswith(name):
                try:
                    return int(scorer_class(name).direction)
                except (ImportError, AttributeError):
                    break
    return -1 if metric.lower() in LOWER_IS_BETTER else 1


def scores_frame(campaign: Campaign, metrics: list[str] | None = None) -> tuple[pd.DataFrame, dict[str, dict]]:
    """Wide metric table of the campaign indexed by summary id (oriented so higher = more faithful) and info.

    A metric stored under several configurations gets one column per configuration, named
    ``metric[config_key]``. Info: ``{column: {"metric", "config_key", "source", "direction", "n"}}``.
    """
    queryset = MetricScore.objects.filter(summary__document__campaign=campaign)
    if metrics is not None:  # only these metric names (all their configurations)
        queryset = queryset.filter(metric__in=metrics)
    rows = list(queryset.values_list("summary_id", "metric", "config_key", "source", "value"))
    long = pd.DataFrame(rows, columns=["summary_id", "metric", "config_key", "source", "value"])
    if long.empty:
        return pd.DataFrame(), {}
    configs = long.groupby("metric")["config_key"].nunique()
    several = set(configs.index[configs > 1])  # a set, not a lookup in the Series for each of the rows
    long["column"] = [f"{m}[{c}]" if m in several else m for m, c in zip(long["metric"], long["config_key"], strict=True)]
    info: dict[str, dict] = {}
    for column, group in long.groupby("column", sort=True):
        source = str(group["source"].mode().iloc[0])
        metric = str(group["metric"].iloc[0])
        info[str(column)] = {
            "metric": metric, "config_key": str(group["config_key"].iloc[0]), "source": source,
            "direction": metric_direction(metric, source), "n": len(group),
        }
    long["value"] = long["value"] * long["column"].map(lambda c: info[c]["direction"])
    wide = long.pivot_table(index="summary_id", columns="column", values="value", aggfunc="last")
    wide.columns = [str(c) for c in wide.columns]
    return wide, info


def pairs_frame(campaign: Campaign, filters: Filters) -> pd.DataFrame:
    """Minimal pairs ``reference_id, edited_id, error_type``.

    A pair made here counts once its review accepted it (``Protocol.pair_verdicts``: BUMP's accepted or
    type-corrected edits); an imported pair (an edited summary no protocol's answers wrote) counts as its source
    reviewed it. The error type is the review's corrected type, else the summary's corrected type, else the
    requested type.
    """
    q = Q(document__campaign=campaign, edited_from__isnull=False)
    if filters.dataset:
        q &= Q(document__dataset=filters.dataset)
    if filters.split != "all":
        q &= Q(document__split=filters.split)
    verdicts = pair_verdicts(campaign)
    rows = Summary.objects.filter(q).values_list(
        "edited_from_id", "id", "corrected_error_type", "requested_error_type", "document__external_id", "external_id", "text",
    )
    # Stable order from the data (document, record id, text), so resampling does not depend on row ids.
    records = sorted(
        ((str(doc), str(ext), text, ref, edit, verdicts.get(edit, "") or corrected or requested or "")
         for ref, edit, corrected, requested, doc, ext, text in rows if verdicts.get(edit, "") is not None),
        key=lambda r: r[:3],
    )
    return pd.DataFrame([r[3:] for r in records], columns=["reference_id", "edited_id", "error_type"])


# Library whose code computes each built-in scorer's values (its installed version is reported).
SCORER_LIBRARIES = {
    "rouge": "rouge-score", "bleu": "sacrebleu", "meteor": "nltk", "bertscore": "bert-score",
    "coco": "transformers", "bartscore": "transformers", "summac_zs": "transformers", "factcc": "transformers",
}


def scorer_implementation(metric: str) -> dict[str, str | None]:
    """``{"scorer", "implementation", "library", "version"}`` of a computed metric output name."""
    from importlib import metadata

    from metrics_service.scorers import REGISTRY

    for name in sorted(REGISTRY, key=len, reverse=True):
        if metric.lower().startswith(name):
            library = SCORER_LIBRARIES.get(name)
            try:
                version = metadata.version(library) if library else None
            except metadata.PackageNotFoundError:
                version = None
            return {"scorer": name, "implementation": REGISTRY[name], "library": library, "version": version}
    return {"scorer": None, "implementation": None, "library": None, "version": None}


def scoring_jobs_by_config(campaign: Campaign) -> dict[str, dict]:
    """The latest scoring job of each configuration key of the campaign, as plain data (config, status, times)."""
    from metrics_service.models import ScoringJob

    out: dict[str, dict] = {}
    jobs = ScoringJob.objects.filter(campaign=campaign).order_by("created_at", "id")
    for job in jobs.values("id", "metric", "config", "config_key", "status", "done", "total", "created_at", "started_at", "finished_at"):
        out[job["config_key"]] = {
            "job_id": job["id"], "scorer": job["metric"], "config": job["config"], "status": job["status"],
            "done": job["done"], "total": job["total"],
            **{k: job[k].isoformat() if job[k] else None for k in ("created_at", "started_at", "finished_at")},
        }
    return out


def summary_benchmarks(campaign: Campaign) -> pd.DataFrame:
    """``benchmark`` per summary id: the source dataset the AggreFact importers keep in ``Document.metadata``
    (LLM-AggreFact's ``dataset``, or AggreFact's source benchmark such as XSumFaith); empty when none."""
    rows = (
        Summary.objects.filter(document__campaign=campaign, edited_from__isnull=True, document__metadata__has_key="benchmark")
        .values_list("id", "document__metadata__benchmark")
    )
    return pd.DataFrame(list(rows), columns=["summary_id", "benchmark"]).set_index("summary_id")
