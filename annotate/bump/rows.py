"""BUMP's rows in the shared jsonl/csv/parquet exports: one ``edit`` row per collected edit, then one per
imported minimal pair.

The row kind and its columns are part of the published layout (``annotate.exporters.tabular.ROW_KINDS`` and
``COLUMNS``, the same for every campaign); BUMP's protocols fill them for their campaigns.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from django.db.models import QuerySet

from annotate.bump.models import Edit
from annotate.exporters.tabular import ExportFilters, filter_by_document, filter_by_summary, filter_by_worker_and_date, iso_time
from annotate.models import Campaign, Summary


def campaign_edits(campaign: Campaign, filters: ExportFilters | None = None) -> QuerySet:
    """The campaign's collected edits matching ``filters``."""
    filters = filters or ExportFilters()
    queryset = filter_by_summary(Edit.objects.filter(source_summary__document__campaign=campaign), filters, "source_summary")
    return filter_by_worker_and_date(queryset, campaign, filters)


def imported_pairs(campaign: Campaign, filters: ExportFilters | None = None) -> QuerySet:
    """Edited summaries that came with an import (a BUMP file), not from an edit collected here."""
    filters = filters or ExportFilters()
    queryset = Summary.objects.filter(document__campaign=campaign, edited_from__isnull=False, edit_record__isnull=True)
    queryset = filter_by_document(queryset, filters, "document")
    if filters.system is not None:
        queryset = queryset.filter(edited_from__system=filters.system)
    if filters.worker_status == "blocked":
        return queryset.none()  # no worker made them
    if filters.since is not None:
        queryset = queryset.filter(created_at__gte=filters.since)
    if filters.until is not None:
        queryset = queryset.filter(created_at__lte=filters.until)
    return queryset


def edit_rows(
    campaign: Campaign, filters: ExportFilters, name: Callable[[int | None], str | None], base: dict[str, Any], *,
    chunk_size: int,
) -> Iterator[dict[str, Any]]:
    """``edit`` rows: the collected edits (``source=collected``), then the imported pairs (``source=imported``:
    no worker, no review of ours)."""
    rows = campaign_edits(campaign, filters).order_by("id").values(
        "source_summary_id", "source_summary__system", "source_summary__document__external_id",
        "source_summary__document__dataset", "source_summary__document__split", "worker_id", "requested_error_type",
        "corrected_error_type", "is_not_applicable", "edited_summary_id", "text", "word_distance", "review_status",
        "created_at",
    )
    for r in rows.iterator(chunk_size=chunk_size):
        yield {
            **base, "record_type": "edit", "campaign": campaign.slug,
            "document_id": r["source_summary__document__external_id"], "dataset": r["source_summary__document__dataset"],
            "split": r["source_summary__document__split"], "summary_id": r["source_summary_id"],
            "system": r["source_summary__system"], "worker": name(r["worker_id"]),
            "requested_error_type": r["requested_error_type"], "corrected_error_type": r["corrected_error_type"],
            "not_applicable": r["is_not_applicable"], "edited_summary_id": r["edited_summary_id"], "edit_text": r["text"],
            "word_distance": r["word_distance"], "review_status": r["review_status"], "source": "collected",
            "created_at": iso_time(r["created_at"]),
        }
    pairs = imported_pairs(campaign, filters).order_by("id").values(
        "id", "edited_from_id", "edited_from__system", "document__external_id", "document__dataset", "document__split",
        "requested_error_type", "corrected_error_type", "text", "created_at",
    )
    for r in pairs.iterator(chunk_size=chunk_size):
        yield {
            **base, "record_type": "edit", "campaign": campaign.slug, "document_id": r["document__external_id"],
            "dataset": r["document__dataset"], "split": r["document__split"], "summary_id": r["edited_from_id"],
            "system": r["edited_from__system"], "requested_error_type": r["requested_error_type"],
            "corrected_error_type": r["corrected_error_type"], "not_applicable": False, "edited_summary_id": r["id"],
            "edit_text": r["text"], "source": "imported", "created_at": iso_time(r["created_at"]),
        }
