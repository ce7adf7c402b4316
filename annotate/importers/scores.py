"""Importers of external metric outputs.

* ``frank``: a JSON array like FRANK's ``baseline_factuality_metrics_outputs.json``: objects with
  ``hash``, ``model_name`` and one numeric key per metric.
* ``jsonl``: one object per line, ``{"summary_id": 12, "metric": "coco_sent", "value": 0.12}``; instead of
  ``summary_id`` a line may name ``document`` (external id) and ``system``.
* ``csv``: a header row and one score per row, with the columns of ``jsonl``: ``summary_id`` (or
  ``document`` and ``system``), ``metric`` and ``value``.

Summaries are looked up in maps of the campaign read once, and scores are written in bulk (see
``Store.score``), so a million scores import in constant memory.
"""
from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .base import ImportFailed, RecordReader, every, iter_json_array, iter_json_lines
from .store import Store

METRIC_BOUND = 1e9  # metric values are probabilities, log-likelihoods or small ratios
FRANK_NON_METRIC_KEYS = {"hash", "model_name", "dataset", "split", "article", "summary", "reference"}
PROGRESS_STEP = 10_000


def _find_summary(store: Store, record: RecordReader, document_field: str, system_field: str) -> int:
    document_id = record.text(document_field)
    system = record.text(system_field)
    summary_id = store.summary_id_by_key(document_id, system)
    if summary_id is None:
        raise record.fail(f"no summary of system {system!r} for document {document_id!r} in campaign '{store.campaign.slug}'", document_field)
    return summary_id


def import_frank_scores(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    done = 0
    progress = every(progress, 1000)
    for path in paths:
        for index, raw in iter_json_array(path):
            with store.problems.of_record():
                record = RecordReader(raw, path=path, index=index)
                summary_id = _find_summary(store, record, "hash", "model_name")
                for key, value in record.record.items():
                    if key in FRANK_NON_METRIC_KEYS or value is None:
                        continue
                    store.score(summary_id, key, record.number(key, low=-METRIC_BOUND, high=METRIC_BOUND), origin=record, field=key)
                store.report.records += 1
            done += 1
            progress(done, None)


def _store_score_record(store: Store, record: RecordReader) -> None:
    if record.get("summary_id") not in (None, ""):
        summary_id = record.get("summary_id")
        if isinstance(summary_id, bool) or not isinstance(summary_id, int):
            raise record.fail("expected an integer", "summary_id")
        if not store.summary_id_in_campaign(summary_id):
            raise record.fail(f"no summary {summary_id} in campaign '{store.campaign.slug}'", "summary_id")
    else:
        summary_id = _find_summary(store, record, "document", "system")
    store.score(summary_id, record.text("metric"), record.number("value", low=-METRIC_BOUND, high=METRIC_BOUND), origin=record)


def import_jsonl_scores(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    done = 0
    progress = every(progress, PROGRESS_STEP)
    for path in paths:
        for line, raw in iter_json_lines(path):
            with store.problems.of_record():
                _store_score_record(store, RecordReader(raw, path=path, index=f"line {line}"))
                store.report.records += 1
            done += 1
            progress(done, None)


def _iter_csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, row)`` with ``summary_id`` and ``value`` converted to numbers where they parse."""
    with path.open("r", encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        columns = set(reader.fieldnames or [])
        if "metric" not in columns or "value" not in columns or not ({"summary_id"} <= columns or {"document", "system"} <= columns):
            raise ImportFailed("the header must name metric, value and summary_id (or document and system)", path=path, record="line 1")
        for row in reader:
            line = reader.line_num
            if None in row:
                raise ImportFailed("more cells than header columns", path=path, record=f"line {line}")
            summary_id = row.get("summary_id")
            if summary_id not in (None, ""):
                try:
                    row["summary_id"] = int(summary_id)
                except ValueError:
                    pass  # left a string: the record check names the field
            try:
                row["value"] = float(row["value"])
            except (TypeError, ValueError):
                pass
            yield line, row


def import_csv_scores(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    done = 0
    progress = every(progress, PROGRESS_STEP)
    for path in paths:
        for line, row in _iter_csv_rows(path):
            with store.problems.of_record():
                _store_score_record(store, RecordReader(row, path=path, index=f"line {line}"))
                store.report.records += 1
            done += 1
            progress(done, None)

