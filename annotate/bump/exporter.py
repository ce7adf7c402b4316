"""BUMP's JSON format (Ma et al., 2023) for a campaign's minimal pairs, record by record.

Each record: ``id`` (an imported pair's own id; ``factlab-<summary id>`` for edits collected here), ``article_id``, ``article``, ``reference_summary``, ``edited_summary``, ``error_type``,
``corrected_error_type`` (BUMP display names, e.g. "Extrinsic Entity Error") and ``scores``
(``<Metric>_reference`` / ``<Metric>_edited``). Only reviewed edits and imported pairs are written
(``annotate.bump.selectors.exportable_pairs``); the BUMP importer reads the output back.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from annotate.bump.selectors import exportable_pairs
from annotate.models import Campaign, MetricScore, Summary
from taxonomies import bump as bump_taxonomy

BATCH = 200


def _type_name(code: str) -> str:
    return bump_taxonomy.display_name(code) if code else ""


def latest_scores(summary_ids: Iterable[int]) -> dict[int, dict[str, float]]:
    """``{summary id: {metric: value}}``, one value per metric: the most recently updated configuration."""
    scores: dict[int, dict[str, float]] = {}
    rows = MetricScore.objects.filter(summary_id__in=list(summary_ids)).order_by("summary_id", "metric", "updated_at", "id")
    for summary_id, metric, value in rows.values_list("summary_id", "metric", "value"):
        scores.setdefault(summary_id, {})[metric] = value  # later rows overwrite: the newest wins
    return scores


def _article_id(external_id: str) -> Any:
    # BUMP's files use integer article ids; keep other ids as text.
    return int(external_id) if external_id.isdigit() else external_id


def pair_id(edited: Summary) -> Any:
    """The pair's id: its source's own ``id`` for imported pairs (never renumbered), ``factlab-<summary id>`` otherwise."""
    source = (edited.metadata or {}).get("bump") or {}
    if "id" in source:
        return source["id"]
    if edited.external_id.startswith("bump:"):
        raw = edited.external_id.removeprefix("bump:")
        return int(raw) if raw.isdigit() else raw
    return f"factlab-{edited.pk}"


def _label(source: dict[str, Any], key: str, code: str) -> str:
    """The source's label string when it still names ``code`` (e.g. Task 2's "Extrinsic Entity"), else BUMP's display name."""
    raw = source.get(key)
    if isinstance(raw, str) and raw.strip() and code:
        try:
            if bump_taxonomy.normalize(raw) == code:
                return raw
        except ValueError:
            pass
    return _type_name(code)


def bump_record(edited: Summary, scores: dict[int, dict[str, float]]) -> dict[str, Any]:
    """One BUMP record for an edited summary (``edited.edited_from`` is its reference).

    Imported pairs keep their source's ``id`` and label strings, and leave out ``corrected_error_type``
    when their source had none (BUMP's Task 2 files); collected edits carry BUMP's display names.
    """
    reference = edited.edited_from
    source = (edited.metadata or {}).get("bump") or {}
    requested, corrected = edited.requested_error_type, edited.corrected_error_type
    # Free-style (Task 2) edits have no requested type: their type is the reviewer's.
    error_type = requested or corrected
    merged: dict[str, float] = {}
    for metric, value in sorted(scores.get(reference.pk, {}).items()):
        merged[f"{metric}_reference"] = value
    for metric, value in sorted(scores.get(edited.pk, {}).items()):
        merged[f"{metric}_edited"] = value
    record: dict[str, Any] = {
        "id": pair_id(edited),
        "article_id": _article_id(edited.document.external_id),
        "article": edited.document.text,
        "reference_summary": reference.text,
        "edited_summary": edited.text,
        "error_type": _label(source, "error_type", error_type),
    }
    if corrected or not source or "corrected_error_type" in source:
        record["corrected_error_type"] = _label(source, "corrected_error_type", corrected)
    record["scores"] = merged
    return record


def iter_bump_records(campaign: Campaign) -> Iterator[dict[str, Any]]:
    """Yield the campaign's exportable minimal pairs as BUMP records, in batches of ``BATCH`` summaries."""
    batch: list[Summary] = []

    def flush() -> Iterator[dict[str, Any]]:
        ids = {s.pk for s in batch} | {s.edited_from_id for s in batch}
        scores = latest_scores(ids)
        for edited in batch:
            yield bump_record(edited, scores)
        batch.clear()

    for edited in exportable_pairs(campaign).iterator(chunk_size=BATCH):
        if not (edited.requested_error_type or edited.corrected_error_type):
            continue  # an untyped pair cannot be written in BUMP's format (error_type is required)
        batch.append(edited)
        if len(batch) >= BATCH:
            yield from flush()
    if batch:
        yield from flush()
