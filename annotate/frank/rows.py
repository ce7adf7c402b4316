"""FRANK's rows in the shared jsonl/csv/parquet exports: one ``judgement`` row per sentence judgement.

The row kind and its columns are part of the published layout (``annotate.exporters.tabular.ROW_KINDS`` and
``COLUMNS``, the same for every campaign); FRANK's protocol fills them for its campaigns.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from django.db.models import OuterRef, Subquery

from annotate.exporters.tabular import ExportFilters, campaign_judgements, iso_time
from annotate.models import Campaign, Participation, SentenceLabel

# Judgement-row columns read from the stored SentenceLabel of the judged sentence.
LABEL_FIELDS = {
    "label_method": "method", "label_factual": "factual", "label_posterior": "posterior", "label_low": "posterior_low",
    "label_high": "posterior_high", "label_categories": "categories", "label_categories_posterior": "categories_posterior",
    "label_categories_low": "categories_low", "label_categories_high": "categories_high", "label_difficulty": "difficulty",
}


def judgement_rows(
    campaign: Campaign, filters: ExportFilters, name: Callable[[int | None], str | None], base: dict[str, Any], *,
    chunk_size: int,
) -> Iterator[dict[str, Any]]:
    """``judgement`` rows in judgement order, each with its sentence's aggregated label and the worker's ability."""
    label = SentenceLabel.objects.filter(summary_id=OuterRef("summary_id"), sentence_index=OuterRef("sentence_index"))
    ability = Participation.objects.filter(worker_id=OuterRef("worker_id"), campaign=campaign).values("label_ability")[:1]
    rows = campaign_judgements(campaign, filters).order_by("id").annotate(
        **{column: Subquery(label.values(field)[:1]) for column, field in LABEL_FIELDS.items()},
        worker_ability=Subquery(ability),
    ).values(
        "summary_id", "summary__system", "summary__document__external_id", "summary__document__dataset",
        "summary__document__split", "sentence_index", "worker_id", "factual", "categories", "lead_time_seconds",
        "source", "created_at", "worker_ability", *LABEL_FIELDS,
    )
    for r in rows.iterator(chunk_size=chunk_size):
        yield {
            **base, "record_type": "judgement", "campaign": campaign.slug,
            "document_id": r["summary__document__external_id"], "dataset": r["summary__document__dataset"],
            "split": r["summary__document__split"], "summary_id": r["summary_id"], "system": r["summary__system"],
            "sentence_index": r["sentence_index"], "worker": name(r["worker_id"]), "factual": r["factual"],
            "categories": list(r["categories"] or []), "lead_time_seconds": r["lead_time_seconds"],
            "source": r["source"], "created_at": iso_time(r["created_at"]),
            **{column: r[column] for column in LABEL_FIELDS}, "worker_ability": r["worker_ability"],
        }
