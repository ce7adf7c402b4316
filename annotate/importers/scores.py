"""Importers of external metric outputs.

* ``frank``: a JSON array like FRANK's ``baseline_factuality_metrics_outputs.json``: objects with
  ``hash``, ``model_name`` and one numeric key per metric.
* ``jsonl``: one object per line, ``{"summary_id": 12, "metric": "coco_sent", "value": 0.12}``; instead of
  ``summary_id`` a line may name ``document`` (external id) and ``system``.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from annotate.models import Summary

from .base import RecordReader, iter_json_array, iter_json_lines
from .store import Store

METRIC_BOUND = 1e9  # metric values are probabilities, log-likelihoods or small ratios
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
                store.score(summary, key, record.number(key, low=-METRIC_BOUND, high=METRIC_BOUND))
            store.report.records += 1
            done += 1
            progress(done, None)


def import_jsonl_scores(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    done = 0
    for path in paths:
        for line, raw in iter_json_lines(path):
            record = RecordReader(raw, path=path, index=f"line {line}")
            if record.get("summary_id") is not None:
                summary_id = record.get("summary_id")
                if isinstance(summary_id, bool) or not isinstance(summary_id, int):
                    raise record.fail("expected an integer", "summary_id")
                summary = Summary.objects.filter(pk=summary_id, document__campaign=store.campaign).first()
                if summary is None:
                    raise record.fail(f"no summary {summary_id} in campaign '{store.campaign.slug}'", "summary_id")
            else:
                summary = _find_summary(store, record, "document", "system")
            store.score(summary, record.text("metric"), record.number("value", low=-METRIC_BOUND, high=METRIC_BOUND))
            store.report.records += 1
            done += 1
            progress(done, None)
