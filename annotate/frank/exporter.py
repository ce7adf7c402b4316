"""FRANK-format export of a campaign, readable by FRANK's scripts and re-importable by FactLab.

Three kinds of files, like FRANK's data folder:

* ``human_annotations.json``: one record per annotated summary: ``hash`` (document id), ``model_name``
  (system), ``dataset`` (``cnndm``; ``bbc`` for XSum, as FRANK writes it), ``split``, ``Factuality``, the
  per-category and per-group scores and the ``Flip_*`` ablations. Summaries with judgements get scores
  computed from them (:func:`annotate.aggregation.frank_scores`, the definitions of ``metrics_service.stats.factuality``); imported FRANK
  summaries without judgements pass their imported ``human_scores`` through. Once the campaign's label model
  has been fitted, judged summaries also carry ``Factuality_posterior`` (expected share of factual
  sentences) and its 95% interval ``Factuality_low``, ``Factuality_high``.
* ``human_annotations_sentence.json``: one record per summary with judgements: its sentences and, per
  sentence, ``{annotator: [codes]}`` (``["NoE"]`` for "no error", ``[]`` for an error without a category, as
  QAGS's "no"), annotators being pseudonymised workers.
* ``baseline_factuality_metrics_outputs.json`` (zip only): the metric scores in FRANK's metric-output format,
  one record per scored summary, ``hash``, ``model_name`` and one key per metric with its stored value (the
  newest configuration's where a metric has several); ``format=frank`` of ``import_scores`` reads it back.
* ``articles/<hash>.json``: (a slug and a hash of the id for ids that are no safe file name, see
  :mod:`annotate.frank.article_files`; the id itself is the records' ``hash``) the article, its lines, every system's summary (``<model>`` and ``<model>_lines``),
  the reference (``Gold``/``Gold_lines``) and the entities; the gold fields (``negative_entity``, ``traps``)
  only when ``include_gold`` (admins).

:func:`stream_frank_zip` streams the three as one zip; :func:`stream_frank_file` streams one of them.
Everything is read in batches of summaries/documents, so memory stays flat.
"""
from __future__ import annotations

import io
import json
import math
import time
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from annotate.aggregation import frank_scores
from annotate.exporters.pseudonyms import WorkerNamer
from annotate.exporters.streams import stream_json_array
from annotate.exporters.tabular import ExportFilters, campaign_judgements, filter_by_document
from annotate.frank.article_files import article_member
from annotate.models import Campaign, Dataset, Document, MetricScore, SentenceLabel, Summary, Trap, TrapSource
from taxonomies.frank import data_file_key

BATCH = 500
FRANK_DATASET_NAMES = {Dataset.CNNDM: "cnndm", Dataset.XSUM: "bbc", Dataset.OTHER: "other"}
NO_ERROR = "NoE"
FILES = ("summaries", "sentences", "articles")


def _summaries(campaign: Campaign, filters: ExportFilters):
    queryset = Summary.objects.filter(document__campaign=campaign, edited_from__isnull=True, is_reference=False)
    queryset = filter_by_document(queryset, filters, "document")
    if filters.system is not None:
        queryset = queryset.filter(system=filters.system)
    return queryset


def _batches(queryset, fields: tuple[str, ...], size: int = BATCH) -> Iterator[list[dict[str, Any]]]:
    """Keyset-paginated ``values()`` batches ordered by id (no long-lived cursor, bounded memory)."""
    last = 0
    while True:
        batch = list(queryset.filter(pk__gt=last).order_by("pk").values("pk", *fields)[:size])
        if not batch:
            return
        yield batch
        last = batch[-1]["pk"]


Vote = tuple[int, int, bool, list[str]]  # (sentence_index, worker_id, factual, categories)


def _judgements_by_summary(campaign: Campaign, filters: ExportFilters, summary_ids: list[int]) -> dict[int, list[Vote]]:
    votes: dict[int, list[Vote]] = defaultdict(list)
    rows = (
        campaign_judgements(campaign, filters).filter(summary_id__in=summary_ids)
        .order_by("summary_id", "sentence_index", "worker_id")
        .values_list("summary_id", "sentence_index", "worker_id", "factual", "categories")
    )
    for summary_id, index, worker_id, factual, categories in rows:
        votes[summary_id].append((index, worker_id, factual, categories or []))
    return votes


def _clean(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _factuality_uncertainty(summary_ids: list[int]) -> dict[int, dict[str, float]]:
    """Per summary with stored sentence labels (the campaign's label model, last refit): the expected share
    of factual sentences and its 95% interval (``Factuality_posterior``, ``Factuality_low``, ``Factuality_high``)."""
    from metrics_service.stats.label_aggregation import poisson_binomial_interval

    by_summary: dict[int, list[float]] = defaultdict(list)
    for summary_id, p in SentenceLabel.objects.filter(summary_id__in=summary_ids).order_by("summary_id", "sentence_index").values_list("summary_id", "p_factual"):
        by_summary[summary_id].append(p)
    out = {}
    for summary_id, probabilities in by_summary.items():
        low, high = poisson_binomial_interval(probabilities)
        out[summary_id] = {"Factuality_posterior": sum(probabilities) / len(probabilities), "Factuality_low": low, "Factuality_high": high}
    return out


def iter_summary_records(
    campaign: Campaign, filters: ExportFilters | None = None, *, platform_names: bool = False
) -> Iterator[dict[str, Any]]:
    """Records of ``human_annotations.json`` (summaries with neither judgements nor imported scores are left out).

    ``platform_names``: each record also carries its ``summary_id`` and names its dataset as the other export
    tables do (``xsum``, not FRANK's ``bbc``), so that a Parquet table joins the others."""
    filters = filters or ExportFilters()
    fields = ("system", "document__external_id", "document__dataset", "document__split", "human_scores")
    for batch in _batches(_summaries(campaign, filters), fields):
        votes = _judgements_by_summary(campaign, filters, [s["pk"] for s in batch])
        uncertainty = _factuality_uncertainty([s["pk"] for s in batch if s["pk"] in votes])
        for s in batch:
            if s["pk"] in votes:
                scores = frank_scores((index, factual, categories) for index, _, factual, categories in votes[s["pk"]])
                scores.update(uncertainty.get(s["pk"], {}))
            else:
                scores = {k: v for k, v in (s["human_scores"] or {}).items() if _clean(v) is not None}
            if "Factuality" not in scores:
                continue
            dataset = s["document__dataset"] if platform_names else FRANK_DATASET_NAMES.get(s["document__dataset"], s["document__dataset"])
            identity = {"summary_id": s["pk"]} if platform_names else {}
            yield {
                **identity, "hash": s["document__external_id"], "model_name": s["system"], "dataset": dataset,
                "split": s["document__split"], **scores,
            }


def iter_metric_score_records(campaign: Campaign, filters: ExportFilters | None = None) -> Iterator[dict[str, Any]]:
    """Records of ``baseline_factuality_metrics_outputs.json``: per scored system summary, its metric values."""
    filters = filters or ExportFilters()
    for batch in _batches(_summaries(campaign, filters), ("system", "document__external_id")):
        values: dict[int, dict[str, float]] = defaultdict(dict)
        rows = MetricScore.objects.filter(summary_id__in=[s["pk"] for s in batch]).order_by("summary_id", "metric", "updated_at", "id")
        for summary_id, metric, value in rows.values_list("summary_id", "metric", "value"):
            values[summary_id][metric] = value  # later rows overwrite: the newest configuration wins
        for s in batch:
            if values.get(s["pk"]):
                yield {"hash": s["document__external_id"], "model_name": s["system"], **values[s["pk"]]}


def _sentence_annotations(votes: list[Vote], n_sentences: int, namer: WorkerNamer) -> list[dict[str, list[str]]]:
    per_sentence: list[dict[str, list[str]]] = [{} for _ in range(n_sentences)]
    for index, worker_id, factual, categories in votes:
        while index >= len(per_sentence):  # judgements beyond the stored sentences are kept
            per_sentence.append({})
        codes = [data_file_key(c) for c in categories]
        # A "not factual" answer without a category (QAGS's "no") is an empty list, never "NoE": the label survives.
        per_sentence[index][namer(worker_id)] = [NO_ERROR] if factual else codes
    return per_sentence


def iter_sentence_records(
    campaign: Campaign, filters: ExportFilters | None = None, *, reveal_workers: bool = False
) -> Iterator[dict[str, Any]]:
    """Records of ``human_annotations_sentence.json``: every summary that has judgements, with every annotator's labels."""
    filters = filters or ExportFilters()
    namer = WorkerNamer(campaign.pk, reveal=reveal_workers)
    fields = ("system", "text", "sentences", "document_id", "document__external_id", "document__dataset", "document__split")
    for batch in _batches(_summaries(campaign, filters), fields):
        by_summary = _judgements_by_summary(campaign, filters, [s["pk"] for s in batch])
        if not by_summary:
            continue
        document_ids = {s["document_id"] for s in batch if s["pk"] in by_summary}
        references = dict(
            Summary.objects.filter(document_id__in=document_ids, is_reference=True, edited_from__isnull=True)
            .order_by("document_id", "id").values_list("document_id", "text")
        )
        articles = dict(Document.objects.filter(pk__in=document_ids).values_list("pk", "text"))
        for s in batch:
            if s["pk"] not in by_summary:
                continue
            yield {
                "hash": s["document__external_id"], "model_name": s["system"],
                "dataset": FRANK_DATASET_NAMES.get(s["document__dataset"], s["document__dataset"]),
                "split": s["document__split"], "article": articles.get(s["document_id"], ""),
                "reference": references.get(s["document_id"], ""), "summary": s["text"],
                "summary_sentences": list(s["sentences"] or []),
                "summary_sentences_annotations": _sentence_annotations(by_summary[s["pk"]], len(s["sentences"] or []), namer),
            }


def iter_article_records(
    campaign: Campaign, filters: ExportFilters | None = None, *, include_gold: bool = False
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(hash, article record)`` for each document with an exported summary (system filter applied)."""
    filters = filters or ExportFilters()
    documents = filter_by_document(Document.objects.filter(campaign=campaign), filters, "")
    if filters.system is not None:
        documents = documents.filter(summaries__system=filters.system).distinct()
    fields = ("external_id", "text", "sentences", "url", "entities", "metadata", "negative_entity")
    for batch in _batches(documents, fields):
        ids = [d["pk"] for d in batch]
        summaries: dict[int, list[dict]] = defaultdict(list)
        for s in (
            Summary.objects.filter(document_id__in=ids, edited_from__isnull=True)
            .order_by("document_id", "id").values("document_id", "system", "text", "sentences", "is_reference")
        ):
            summaries[s["document_id"]].append(s)
        traps: dict[int, list[list[str]]] = defaultdict(list)
        if include_gold:
            # Mechanical traps only: traps taken from BUMP edits belong to another campaign's data and are
            # found again when the pages are prepared.
            mechanical = Trap.objects.filter(document_id__in=ids, source=TrapSource.MECHANICAL)
            for document_id, code, text in mechanical.order_by("id").values_list("document_id", "code", "text"):
                traps[document_id].append([code, text])
        for d in batch:
            record: dict[str, Any] = {
                "hash": d["external_id"], "id": (d["metadata"] or {}).get("frank_id", ""), "url": d["url"],
                "article": d["text"], "article_lines": list(d["sentences"] or []),
                "entity_counter": dict.fromkeys(d["entities"] or [], 1), "model_names": [],
            }
            for s in summaries.get(d["pk"], []):
                key = "Gold" if s["is_reference"] else s["system"]
                if key in record:  # a second reference: keep the first, as the importer does
                    continue
                record[key] = s["text"]
                record[f"{key}_lines"] = list(s["sentences"] or [])
                record["model_names"].append(f"{key}_lines")
            if include_gold:
                record["negative_entity"] = d["negative_entity"]
                record["traps"] = traps.get(d["pk"], [])
            yield d["external_id"], record


class _Sink(io.RawIOBase):
    """A write-only, unseekable buffer: ``zipfile`` then writes data descriptors and never seeks back."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._position = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._chunks.append(bytes(data))
        self._position += len(data)
        return len(data)

    def tell(self) -> int:
        return self._position

    def drain(self) -> bytes:
        data = b"".join(self._chunks)
        self._chunks.clear()
        return data


def stream_frank_zip(
    campaign: Campaign, filters: ExportFilters | None = None, *, reveal_workers: bool = False, include_gold: bool = False
) -> Iterator[bytes]:
    """The zip (``human_annotations.json``, ``human_annotations_sentence.json``, ``articles/<hash>.json``), streamed."""
    filters = filters or ExportFilters()
    sink = _Sink()
    members: list[tuple[str, Iterable[bytes]]] = [
        ("human_annotations.json", stream_json_array(iter_summary_records(campaign, filters))),
        ("human_annotations_sentence.json", stream_json_array(iter_sentence_records(campaign, filters, reveal_workers=reveal_workers))),
        ("baseline_factuality_metrics_outputs.json", stream_json_array(iter_metric_score_records(campaign, filters))),
    ]
    now = time.localtime()[:6]
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, chunks in members:
            info = zipfile.ZipInfo(name, date_time=now)
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w", force_zip64=True) as member:
                for chunk in chunks:
                    member.write(chunk)
                    if data := sink.drain():
                        yield data
            yield sink.drain()
        for article_hash, record in iter_article_records(campaign, filters, include_gold=include_gold):
            archive.writestr(article_member(article_hash), json.dumps(record, ensure_ascii=False))
            if data := sink.drain():
                yield data
    yield sink.drain()


def stream_frank_file(
    campaign: Campaign, which: str, filters: ExportFilters | None = None, *, reveal_workers: bool = False,
    include_gold: bool = False,
) -> Iterator[bytes]:
    """One file of the export as a JSON array: ``summaries``, ``sentences`` or ``articles`` (records with their hash)."""
    filters = filters or ExportFilters()
    if which == "summaries":
        return stream_json_array(iter_summary_records(campaign, filters))
    if which == "sentences":
        return stream_json_array(iter_sentence_records(campaign, filters, reveal_workers=reveal_workers))
    if which == "articles":
        return stream_json_array(record for _, record in iter_article_records(campaign, filters, include_gold=include_gold))
    raise ValueError(f"unknown FRANK file {which!r}; expected one of {', '.join(FILES)}")
