"""BUMP importer (Ma et al., 2023): each record is a reference summary and its minimal-pair edit.

Record fields: ``article_id``, ``article``, ``reference_summary``, ``edited_summary``, ``error_type``,
optional ``corrected_error_type`` and ``scores`` (``<Metric>_reference`` / ``<Metric>_edited``).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from annotate.importers.base import RecordReader, batched, every, iter_json_array
from annotate.importers.scores import METRIC_BOUND
from annotate.importers.store import Store
from annotate.models import Dataset
from taxonomies import bump as bump_taxonomy

# Records per spaCy and database batch.
BATCH = 256


def _error_type(record: RecordReader, name: str, required: bool) -> str:
    raw = record.get(name)
    if raw in (None, "") and not required:
        return ""
    if not isinstance(raw, str):
        raise record.fail("missing" if raw is None else "expected a string", name)
    try:
        return bump_taxonomy.normalize(raw)
    except ValueError as exc:
        raise record.fail(str(exc), name) from exc


def _parse(record: RecordReader) -> dict:
    article_id = record.text("article_id")
    article = record.text("article")
    reference_text = record.text("reference_summary")
    edited_text = record.text("edited_summary")
    error_type = _error_type(record, "error_type", required=True)
    corrected = _error_type(record, "corrected_error_type", required=False)
    scores = record.get("scores") or {}
    if not isinstance(scores, dict):
        raise record.fail("expected an object of metric scores", "scores")
    parsed_scores: list[tuple[str, str, float]] = []
    for key, value in scores.items():
        metric, _, side = key.rpartition("_")
        if side not in ("reference", "edited") or not metric:
            raise record.fail(f"score key {key!r} must end in _reference or _edited", "scores")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise record.fail(f"score {key!r} is not a number", "scores")
        parsed_scores.append((metric, side, RecordReader(scores, path=record.path, index=record.index).number(key, low=-METRIC_BOUND, high=METRIC_BOUND)))
    pair_id = str(record.get("id", "")) or hashlib.sha1(f"{edited_text}\x00{error_type}".encode()).hexdigest()[:16]
    # The source's own id and label strings, written back verbatim by the BUMP export.
    source = {k: record.get(k) for k in ("id", "error_type", "corrected_error_type") if k in record.record}
    return {
        "article_id": article_id, "article": article, "reference": reference_text, "edited": edited_text,
        "error_type": error_type, "corrected": corrected, "scores": parsed_scores, "pair_id": pair_id,
        "source": source,
        "origin": record,  # names this record if a later one reuses its article id with another text
    }


def import_bump(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    done = 0
    progress = every(progress, 100)
    for path in paths:
        for batch in batched(iter_json_array(path), BATCH):
            parsed = store.problems.parse_each(batch, lambda row: _parse(RecordReader(row[1], path=path, index=row[0])))
            # One spaCy pass over the distinct texts of the batch (an article and its reference recur in every
            # record of their pairs); texts of rows that exist already are not split at all.
            store.sentences.prime(
                text for p in parsed if not store.has_document(p["article_id"]) for text in (p["article"], p["reference"], p["edited"])
            )
            for p in parsed:
                with store.problems.of_record():  # a value too long for its field names this record; the run goes on
                    _store_pair(store, p)
                done += 1
                progress(done, None)
            store.sentences.clear()


def _store_pair(store: Store, p: dict) -> None:
    document = store.document(
        p["article_id"], origin=p["origin"], id_field="article_id", dataset=Dataset.CNNDM, text=p["article"], sentences=lambda: store.sentences.split(p["article"]),
        metadata={"source": "bump"},
    )
    reference = store.summary(
        document, "reference", origin=p["origin"], text=p["reference"], is_reference=True, sentences=lambda: store.sentences.split(p["reference"])
    )
    edited = store.edited_summary(
        reference, f"bump:{p['pair_id']}", origin=p["origin"], system="human-edit", text=p["edited"],
        sentences=lambda: store.sentences.split(p["edited"]), requested_error_type=p["error_type"],
        corrected_error_type=p["corrected"],
        metadata={"bump": p["source"]},
    )
    for metric, side, value in p["scores"]:
        store.score(reference if side == "reference" else edited, metric, value, origin=p["origin"], field=f"scores.{metric}_{side}")
    store.items_for_reference(document, reference)
    store.report.records += 1
