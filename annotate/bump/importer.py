"""BUMP importer (Ma et al., 2023): each record is a reference summary and its minimal-pair edit.

Record fields: ``article_id``, ``article``, ``reference_summary``, ``edited_summary``, ``error_type``,
optional ``corrected_error_type`` and ``scores`` (``<Metric>_reference`` / ``<Metric>_edited``).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from annotate.bump import taxonomy as bump_taxonomy
from annotate.models import Dataset
from annotate.nlp import split_sentences

from annotate.importers.base import RecordReader, iter_json_array
from annotate.importers.scores import METRIC_BOUND
from annotate.importers.store import Store


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


def import_bump(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    done = 0
    for path in paths:
        for index, raw in iter_json_array(path):
            record = RecordReader(raw, path=path, index=index)
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
                parsed_scores.append((metric, side, RecordReader(scores, path=path, index=index).number(key, low=-METRIC_BOUND, high=METRIC_BOUND)))

            document = store.document(
                article_id, origin=record, id_field="article_id", dataset=Dataset.CNNDM, text=article, sentences=split_sentences(article),
                metadata={"source": "bump"},
            )
            reference = store.summary(
                document, "reference", origin=record, text=reference_text, is_reference=True, sentences=split_sentences(reference_text)
            )
            pair_id = str(record.get("id", "")) or hashlib.sha1(f"{edited_text}\x00{error_type}".encode()).hexdigest()[:16]
            edited = store.edited_summary(
                reference, f"bump:{pair_id}", system="human-edit", text=edited_text,
                sentences=split_sentences(edited_text), requested_error_type=error_type, corrected_error_type=corrected,
            )
            for metric, side, value in parsed_scores:
                store.score(reference if side == "reference" else edited, metric, value)
            store.items_for_reference(document, reference)
            store.report.records += 1
            done += 1
            progress(done, None)
