"""Flat exports of a campaign (JSON lines or CSV): one row per sentence judgement, edit, metric score or summary.

Rows are read with ``values()`` over ``.iterator(chunk_size=...)`` querysets and written one by one, so
memory stays flat however large the campaign. The columns are the same for every row kind (cells that do
not apply are empty) and are documented in ``docs/api.md``.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.db.models import Exists, OuterRef, Q, QuerySet

from annotate.aggregation import frank_scores
from annotate.models import (
    Campaign,
    JudgementSource,
    MetricScore,
    Participation,
    SentenceJudgement,
    Summary,
)
from annotate.safe_csv import SafeCsvWriter

from .pseudonyms import WorkerNamer

CHUNK_SIZE = 2000
#: The published row kinds, in this order, in every campaign's export (an empty kind still has its CSV header and
#: its line in the Parquet card).
ROW_KINDS = ("judgements", "edits", "scores", "summaries")
#: Those of them a protocol's answers fill (FRANK's sentence judgements, BUMP's edits): the protocol that declares
#: the kind (``Protocol.layout_row_kinds``) yields its rows, in a campaign of any kind, since a campaign may hold
#: data of another protocol's format. Their columns stay in :data:`COLUMNS` so that the published CSV header and
#: Parquet schemas keep their order.
LAYOUT_ANSWER_KINDS = ("judgements", "edits")
WORKER_STATUSES = ("any", "active", "blocked")
#: Whose sentence judgements an export holds: people's (default), model annotators' (LLMs doing the task), or both.
ANNOTATORS = ("human", "model", "all")
COLUMNS: tuple[str, ...] = (
    "record_type", "campaign", "document_id", "dataset", "split", "summary_id", "system", "sentence_index",
    "worker", "factual", "categories", "lead_time_seconds", "source", "requested_error_type",
    "corrected_error_type", "not_applicable", "edited_summary_id", "edit_text", "word_distance", "review_status",
    "metric", "config_key", "value", "created_at",
    # The sentence's aggregated label under the campaign's label model, with its uncertainty (judgement rows;
    # empty until the label model has been fitted): see docs/analysis.md "Label posteriors and intervals".
    *(f"label_{name}" for name in (
        "method", "factual", "posterior", "low", "high", "categories", "categories_posterior", "categories_low",
        "categories_high", "difficulty",
    )),
    # The judging worker's ability under the same label model (GLAD's alpha, else their reliability).
    "worker_ability",
    # Score rows: +1 when a higher value means more faithful, -1 when lower does (the report orients by it).
    "direction",
    # Summary rows: what a researcher needs to recompute the report's figures from the file alone.
    "summary_role", "summary_text", "human_factuality", "human_scores", "unified_types", "unified_types_source",
)

@dataclass(frozen=True)
class ExportFilters:
    """Which part of a campaign an export holds. ``None`` means "no restriction".

    ``worker_status``: ``any``; ``active`` drops the work of workers blocked globally or in this campaign;
    ``blocked`` keeps only theirs. ``since``/``until`` bound ``created_at`` (inclusive). ``annotators``
    (one of :data:`ANNOTATORS`): whose sentence judgements; people's by default, so that a model annotator's
    answers never enter a human dataset unasked.
    """

    split: str | None = None
    dataset: str | None = None
    system: str | None = None
    worker_status: str = "any"
    since: datetime | None = None
    until: datetime | None = None
    annotators: str = "human"


class LayoutRows(Protocol):
    """What the exporter asks of the protocol owning a row kind (``annotate.protocols.base.Protocol.layout_rows``),
    named by its shape: the protocols import this module, not the other way round."""

    def layout_rows(self, campaign: Campaign, kind: str, export_filters: ExportFilters,
                    name: Callable[[int | None], str | None], base: dict[str, Any], *, chunk_size: int) -> Iterable[dict[str, Any]]: ...


def filter_by_document(queryset: QuerySet, filters: ExportFilters, prefix: str) -> QuerySet:
    """Apply split/dataset filters to ``queryset`` whose document is reached through ``prefix`` (e.g. ``summary__document``; empty for documents)."""
    lead = f"{prefix}__" if prefix else ""
    if filters.split is not None:
        queryset = queryset.filter(**{f"{lead}split": filters.split})
    if filters.dataset is not None:
        queryset = queryset.filter(**{f"{lead}dataset": filters.dataset})
    return queryset


def filter_by_summary(queryset: QuerySet, filters: ExportFilters, summary: str) -> QuerySet:
    """Apply split/dataset/system filters to rows whose summary is reached through ``summary`` (e.g. ``source_summary``)."""
    queryset = filter_by_document(queryset, filters, f"{summary}__document")
    if filters.system is not None:
        queryset = queryset.filter(**{f"{summary}__system": filters.system})
    return queryset


def filter_by_annotators(queryset: QuerySet, annotators: str) -> QuerySet:
    """Sentence judgements of people (``human``), of model annotators (``model``) or of both (``all``)."""
    if annotators == "human":
        return queryset.exclude(source=JudgementSource.MODEL)
    if annotators == "model":
        return queryset.filter(source=JudgementSource.MODEL)
    if annotators == "all":
        return queryset
    raise ValueError(f"annotators must be one of {', '.join(ANNOTATORS)}, not {annotators!r}")


def filter_by_worker_and_date(queryset: QuerySet, campaign: Campaign, filters: ExportFilters, worker_field: str = "worker") -> QuerySet:
    """Apply the worker-status and date-range filters to rows that have a worker and ``created_at``."""
    if filters.worker_status != "any":
        blocked_here = Participation.objects.filter(worker_id=OuterRef(f"{worker_field}_id"), campaign=campaign, is_blocked=True)
        blocked = Q(**{f"{worker_field}__is_blocked": True}) | Exists(blocked_here)
        queryset = queryset.filter(blocked) if filters.worker_status == "blocked" else queryset.exclude(blocked)
    if filters.since is not None:
        queryset = queryset.filter(created_at__gte=filters.since)
    if filters.until is not None:
        queryset = queryset.filter(created_at__lte=filters.until)
    return queryset


def campaign_judgements(campaign: Campaign, filters: ExportFilters | None = None) -> QuerySet:
    """The campaign's sentence judgements (never trap answers) matching ``filters``."""
    filters = filters or ExportFilters()
    judgements = filter_by_annotators(SentenceJudgement.objects.filter(summary__document__campaign=campaign), filters.annotators)
    queryset = filter_by_summary(judgements, filters, "summary")
    return filter_by_worker_and_date(queryset, campaign, filters)


def campaign_scores(campaign: Campaign, filters: ExportFilters | None = None) -> QuerySet:
    filters = filters or ExportFilters()
    queryset = filter_by_summary(MetricScore.objects.filter(summary__document__campaign=campaign), filters, "summary")
    if filters.since is not None:
        queryset = queryset.filter(created_at__gte=filters.since)
    if filters.until is not None:
        queryset = queryset.filter(created_at__lte=filters.until)
    return queryset


def iso_time(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""


def iter_rows(
    campaign: Campaign, owners: Mapping[str, LayoutRows], filters: ExportFilters | None = None, *, kinds: Iterable[str] = ROW_KINDS,
    reveal_workers: bool = False, chunk_size: int = CHUNK_SIZE,
) -> Iterator[dict[str, Any]]:
    """Yield one dict per judgement, edit, metric score and summary (in that order), keyed by :data:`COLUMNS`;
    ``owners`` (``annotate.protocols.layout_row_owners()``): the protocol that yields each of :data:`LAYOUT_ANSWER_KINDS`
    (a kind no protocol owns stays empty)."""
    filters = filters or ExportFilters()
    kinds = set(kinds)
    unknown = kinds - set(ROW_KINDS)
    if unknown:
        raise ValueError(f"unknown row kind(s) {', '.join(sorted(unknown))}; expected {', '.join(ROW_KINDS)}")
    name = WorkerNamer(campaign.pk, reveal=reveal_workers)
    base = dict.fromkeys(COLUMNS, None)
    for kind in LAYOUT_ANSWER_KINDS:
        if kind in kinds and kind in owners:
            yield from owners[kind].layout_rows(campaign, kind, filters, name, base, chunk_size=chunk_size)
    if "scores" in kinds:
        rows = campaign_scores(campaign, filters).order_by("id").values(
            "summary_id", "summary__system", "summary__document__external_id", "summary__document__dataset",
            "summary__document__split", "metric", "config_key", "value", "source", "created_at",
        )
        from annotate.metrics_port import metrics

        directions: dict[tuple[str, str], int] = {}
        for r in rows.iterator(chunk_size=chunk_size):
            key = (r["metric"], r["source"])
            if key not in directions:
                directions[key] = metrics().metric_direction(*key)
            yield {
                **base, "record_type": "score", "campaign": campaign.slug,
                "document_id": r["summary__document__external_id"], "dataset": r["summary__document__dataset"],
                "split": r["summary__document__split"], "summary_id": r["summary_id"], "system": r["summary__system"],
                "metric": r["metric"], "config_key": r["config_key"], "value": r["value"], "source": r["source"],
                "direction": directions[key], "created_at": iso_time(r["created_at"]),
            }
    if "summaries" in kinds:
        yield from summary_rows(campaign, filters, base, chunk_size=chunk_size)


def campaign_summaries(campaign: Campaign, filters: ExportFilters | None = None) -> QuerySet:
    """Every summary of the campaign (system outputs, references, edited summaries) matching the document and system filters."""
    filters = filters or ExportFilters()
    queryset = filter_by_document(Summary.objects.filter(document__campaign=campaign), filters, "document")
    if filters.system is not None:
        queryset = queryset.filter(system=filters.system)
    return queryset


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _summary_role(is_reference: bool, edited_from_id: int | None) -> str:
    if edited_from_id is not None:
        return "edited"
    return "reference" if is_reference else "system"


def per_summary_types(votes: list[tuple[int, int, bool, list[str]]], human_scores: dict[str, Any]) -> tuple[list[str], str]:
    """A summary's unified error types and how they were found (``annotators``, ``approximation`` or empty).

    From judgements (``(sentence_index, worker_id, factual, categories)``): the types more than one annotator
    marked (AggreFact's rule), when the summary is not wholly factual. Without judgements, the named
    approximation from FRANK's released summary-level category scores (a category scoring below 1)."""
    # Imported here: pandas loads only when summary rows are exported.
    import pandas as pd

    from taxonomies import unified
    from taxonomies.frank import CODES

    factuality = human_scores.get("Factuality")
    if factuality is None or factuality >= 1:
        return [], ""
    if votes and any(categories for *_, categories in votes):
        marked = unified.annotator_types(pd.DataFrame(
            [(0, worker_id, categories) for _, worker_id, _, categories in votes], columns=["summary_id", "worker_id", "categories"]))
        return list(marked.get(0, ())), "annotators"
    if votes:
        return [], ""

    def category_score(code: str) -> float:
        value = human_scores.get(code)
        if value is None and code == "OtherE":
            value = human_scores.get("Other")  # FRANK's files key the category OtherE as "Other"
        return 1.0 if value is None else value

    codes = [code for code in CODES if category_score(code) < 1]
    return list(unified.summary_types(codes, float(factuality))), "approximation"


def summary_rows(
    campaign: Campaign, filters: ExportFilters, base: dict[str, Any], *, chunk_size: int = CHUNK_SIZE
) -> Iterator[dict[str, Any]]:
    """``summary`` rows: the summary's text and role, its human scores as the report computes them by default
    (FRANK's scores from the majority label of each judged sentence, else the imported summary-level scores),
    ``human_factuality`` (their ``Factuality``) and its unified error types (:func:`per_summary_types`)."""
    queryset = campaign_summaries(campaign, filters)
    last = 0
    while True:
        batch = list(queryset.filter(pk__gt=last).order_by("pk").values(
            "pk", "system", "text", "is_reference", "edited_from_id", "human_scores", "document__external_id",
            "document__dataset", "document__split",
        )[:chunk_size])
        if not batch:
            return
        last = batch[-1]["pk"]
        votes: dict[int, list[tuple[int, int, bool, list[str]]]] = {}
        judged = campaign_judgements(campaign, filters).filter(summary_id__in=[s["pk"] for s in batch]).order_by("id")
        for summary_id, index, worker_id, factual, categories in judged.values_list(
                "summary_id", "sentence_index", "worker_id", "factual", "categories"):
            votes.setdefault(summary_id, []).append((index, worker_id, factual, list(categories or [])))
        for s in batch:
            mine = votes.get(s["pk"], [])
            if mine:
                scores = frank_scores((index, factual, categories) for index, _, factual, categories in mine)
            else:
                scores = {k: float(v) for k, v in (s["human_scores"] or {}).items() if _finite_number(v)}
            types, types_source = per_summary_types(mine, scores)
            yield {
                **base, "record_type": "summary", "campaign": campaign.slug, "document_id": s["document__external_id"],
                "dataset": s["document__dataset"], "split": s["document__split"], "summary_id": s["pk"], "system": s["system"],
                "source": "collected" if mine else ("imported" if scores else ""),
                "summary_role": _summary_role(s["is_reference"], s["edited_from_id"]), "summary_text": s["text"],
                "human_factuality": scores.get("Factuality"), "human_scores": scores or None,
                "unified_types": types, "unified_types_source": types_source,
            }


def jsonl_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """One compact JSON object per row, newline-terminated."""
    for row in rows:
        yield json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ";".join(map(str, value))
    return value


class _Echo:
    """A file-like object whose ``write`` returns what it is given (csv.writer then yields lines)."""

    def write(self, value: str) -> str:
        return value


def csv_lines(rows: Iterable[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> Iterator[str]:
    """A header line then one CSV line per row; lists are ``;``-joined, booleans ``true``/``false``, None empty.
    ``columns``: the shared ones, then those a protocol's answer rows add."""
    writer = SafeCsvWriter(_Echo())
    yield writer.writerow(columns)
    for row in rows:
        yield writer.writerow([_csv_cell(row.get(c)) for c in columns])


def batched_lines(lines: Iterable[str], target_bytes: int = 64 * 1024) -> Iterator[bytes]:
    """Join small lines into ~64 KiB chunks: fewer, larger writes to the socket."""
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size >= target_bytes:
            yield "".join(buffer).encode()
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer).encode()

