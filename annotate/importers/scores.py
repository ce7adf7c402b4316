"""Importers of external metric outputs.

* ``frank``: a JSON array like FRANK's ``baseline_factuality_metrics_outputs.json``: objects with
  ``hash``, ``model_name`` and one numeric key per metric.
* ``jsonl``: one object per line, ``{"summary_id": 12, "metric": "coco_sent", "value": 0.12}``; instead of
  ``summary_id`` a line may name ``document`` (external id) and ``system``.
* ``csv``: the same fields as columns, with a header line: ``summary_id,metric,value`` or
  ``document,system,metric,value`` (UTF-8, comma-separated; an empty ``summary_id`` cell falls back to
  ``document`` + ``system``).
"""
from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

from annotate.models import Summary

from .base import ImportFailed, RecordReader, iter_json_array, iter_json_lines
from .store import Store

FRANK_NON_METRIC_KEYS = {"hash", "model_name", "dataset", "split", "article", "summary", "reference"}


def _find_summary(store: Store, record: RecordReader, document_field: str, system_field: str) -> Summary:
    document_id = record.text(document_field)
    system = record.text(system_field)
    summary = Summary.objects.filter(
        document__campaign=store.campaign, document__external_id=document_id, system=system, edited_from=None
    ).first()
    if summary is None:
        raise record.fail(f"no summary of system {system!r} for document {document_id!r} in campaign '{store.campaign.slug}'", document_field)
    return summary


def import_frank_scores(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    done = 0
    for path in paths:
        for index, raw in iter_json_array(path):
            record = RecordReader(raw, path=path, index=index)
            summary = _find_summary(store, record, "hash", "model_name")
            for key, value in record.record.items():
                if key in FRANK_NON_METRIC_KEYS or value is None:
                    continue
                store.score(summary, key, record.number(key))
            store.report.records += 1
            done += 1
            progress(done, None)


def import_jsonl_scores(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    done = 0
    for path in paths:
        for line, raw in iter_json_lines(path):
            _score_record(store, RecordReader(raw, path=path, index=f"line {line}"))
            done += 1
            progress(done, None)


def _csv_cell(record: dict, name: str, cast: type, line: int, path: Path):
    text = (record.get(name) or "").strip()
    if not text:
        return None
    try:
        return cast(text)
    except ValueError:
        kind = "an integer" if cast is int else "a number"
        raise ImportFailed(f"expected {kind}, got {text!r}", path=path, record=f"line {line}", field=name) from None


def import_csv_scores(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    """CSV rows with the fields of the ``jsonl`` format; numbers are parsed, then checked as JSON lines are."""
    done = 0
    for path in paths:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = set(reader.fieldnames or [])
            if not {"metric", "value"} <= header or not ({"summary_id"} <= header or {"document", "system"} <= header):
                raise ImportFailed(
                    f"the header must name metric, value and summary_id (or document and system); got {sorted(header)}",
                    path=path, record="line 1",
                )
            for line, row in enumerate(reader, start=2):
                raw = {
                    "summary_id": _csv_cell(row, "summary_id", int, line, path),
                    "document": (row.get("document") or "").strip() or None,
                    "system": (row.get("system") or "").strip() or None,
                    "metric": (row.get("metric") or "").strip() or None,
                    "value": _csv_cell(row, "value", float, line, path),
                }
                _score_record(store, RecordReader(raw, path=path, index=f"line {line}"))
                done += 1
                progress(done, None)


def _score_record(store: Store, record: RecordReader) -> None:
    """Store one ``{summary_id | document+system, metric, value}`` record of the jsonl or csv format."""
    if record.get("summary_id") is not None:
        summary_id = record.get("summary_id")
        if isinstance(summary_id, bool) or not isinstance(summary_id, int):
            raise record.fail("expected an integer", "summary_id")
        summary = Summary.objects.filter(pk=summary_id, document__campaign=store.campaign).first()
        if summary is None:
            raise record.fail(f"no summary {summary_id} in campaign '{store.campaign.slug}'", "summary_id")
    else:
        summary = _find_summary(store, record, "document", "system")
    store.score(summary, record.text("metric"), record.number("value"))
    store.report.records += 1
