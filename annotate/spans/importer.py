"""Import of released span annotations: summaries with their article and the erroneous spans annotators marked.

Two formats, JSON arrays or JSON lines (one object per line), described in ``annotate/spans/README.md``:

``span_records`` (as Goyal & Durrett 2021, CLIFF and XSumFaith release them): a record is a summary with its
article and a list of span *strings*, each found in the summary (its first occurrence, or the first at or after
``start`` when given) with an error type in any released wording (:func:`annotate.spans.taxonomy.normalize`).
A record with an ``annotator`` is one annotator's answer (several records per summary); without, the release is
already aggregated (one answer per summary). XSumFaith's flat layout, one row per marked span, is read too: rows
with the same summary and annotator form one answer, a row with an empty span is "no error".

``span_offsets``: the same records, each span with character ``start`` and ``end`` in the summary (and, when
given, its ``text``, which must equal those characters).

Every wrong record is named (file, record, field, the span that cannot be found) and nothing is stored.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from annotate.importers.base import RecordReader, batched, every, iter_json_array, iter_json_lines
from annotate.importers.store import Store
from annotate.models import Dataset
from metrics_service.stats.spans import snap, word_tokens

from . import taxonomy
from .models import AnswerSource, SpanAnswer
from .words import as_json, clean_spans, words

BATCH = 256
ARTICLE_FIELDS = ("article", "document", "source")
SPAN_LIST_FIELDS = ("errors", "annotations", "spans")
FLAT_SPAN_FIELDS = ("hallucinated_span", "span")
TYPE_FIELDS = ("type", "error_type", "label", "hallucination_type")


def _first(record: dict, names: tuple[str, ...]) -> str | None:
    return next((name for name in names if name in record), None)


def _records(path: Path):
    reader = iter_json_lines if path.suffix == ".jsonl" else iter_json_array
    return reader(path)


def _error_type(entry: RecordReader, field_prefix: str) -> str:
    name = _first(entry.record, TYPE_FIELDS)
    if name is None:
        raise entry.fail("missing (an error type: one of " + ", ".join(TYPE_FIELDS) + ")", f"{field_prefix}type")
    value = entry.record[name]
    try:
        return taxonomy.normalize(value if isinstance(value, str) else repr(value))
    except ValueError as exc:
        raise entry.fail(str(exc), f"{field_prefix}{name}") from exc


def _locate(summary: str, entry: RecordReader, field_prefix: str, *, offsets: bool) -> tuple[int, int]:
    """Character range of one span of ``summary``."""
    text_field = _first(entry.record, ("text", *FLAT_SPAN_FIELDS))
    text = entry.record.get(text_field) if text_field else None
    if text is not None and not isinstance(text, str):
        raise entry.fail("expected a string", f"{field_prefix}{text_field}")
    start = entry.get("start")
    if start is not None and (isinstance(start, bool) or not isinstance(start, int) or start < 0):
        raise entry.fail("expected a character offset (a whole number, 0 or more)", f"{field_prefix}start")
    if offsets:
        end = entry.get("end")
        if start is None or end is None or isinstance(end, bool) or not isinstance(end, int) or not start < end <= len(summary):
            raise entry.fail(f"start and end must be character offsets with start < end <= {len(summary)} (the summary's length)",
                             f"{field_prefix}end")
        if text is not None and summary[start:end] != text:
            raise entry.fail(f"characters {start}-{end} of the summary read {summary[start:end]!r}, not {text!r}", f"{field_prefix}text")
        return start, end
    if not text or not text.strip():
        raise entry.fail("the span text is missing or empty", f"{field_prefix}{text_field or 'text'}")
    found = summary.find(text, start or 0)
    if found < 0:
        where = f" at or after character {start}" if start else ""
        raise entry.fail(f"span {text!r} is not in the summary{where}", f"{field_prefix}{text_field}")
    return found, found + len(text)


def _word_spans(summary: str, entries: list[tuple[RecordReader, str]], *, offsets: bool) -> list:
    word_list = words(summary)
    tokens = word_tokens(summary)
    spans = []
    for entry, prefix in entries:
        start, end = _locate(summary, entry, prefix, offsets=offsets)
        error_type = _error_type(entry, prefix)
        try:
            first, last = snap(tokens, start, end)
        except ValueError as exc:
            raise entry.fail(f"span {summary[start:end]!r}: {exc}", f"{prefix}start") from exc
        spans.append((first, last, error_type))
    return as_json(clean_spans(word_list, spans))


def _parse(record: RecordReader, *, offsets: bool) -> dict:
    summary = record.text("summary")
    article_field = _first(record.record, ARTICLE_FIELDS) or "article"
    article = record.text(article_field)
    system = record.text("system", required=False) or record.text("model", required=False) or "system"
    article_id = (record.text("article_id", required=False) or record.text("bbcid", required=False)
                  or hashlib.sha1(article.encode()).hexdigest()[:16])
    dataset = record.text("dataset", required=False).lower()
    if dataset and dataset not in Dataset.values:
        raise record.fail(f"unknown dataset {dataset!r}; expected one of {', '.join(Dataset.values)}", "dataset")
    annotator = record.text("annotator", required=False) or record.text("worker_id", required=False)
    list_field = _first(record.record, SPAN_LIST_FIELDS)
    if list_field is not None:
        entries = [(RecordReader(e, path=record.path, index=record.index), f"{list_field}[{k}].")
                   for k, e in enumerate(record.obj_list(list_field))]
    elif _first(record.record, FLAT_SPAN_FIELDS) is not None:
        flat = _first(record.record, FLAT_SPAN_FIELDS)
        entries = [(record, "")] if str(record.record.get(flat) or "").strip() else []
    else:
        raise record.fail("missing (a list of spans: " + ", ".join(SPAN_LIST_FIELDS) + "; or one span per row: "
                          + ", ".join(FLAT_SPAN_FIELDS) + ")", SPAN_LIST_FIELDS[0])
    spans = _word_spans(summary, entries, offsets=offsets)
    return {"summary": summary, "article": article, "system": system, "article_id": article_id, "dataset": dataset or Dataset.OTHER,
            "annotator": annotator, "spans": spans, "n_words": len(words(summary)), "origin": record,
            "record_id": record.text("id", required=False)}


def _importer(offsets: bool) -> Callable[..., None]:
    def run(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
        done = 0
        progress = every(progress, 100)
        answers: dict[tuple[int, str], tuple[dict, list]] = {}
        for path in paths:
            for batch in batched(_records(path), BATCH):
                parsed = store.problems.parse_each(batch, lambda row: _parse(RecordReader(row[1], path=path, index=row[0]), offsets=offsets))
                for p in parsed:
                    with store.problems.of_record():
                        summary = _store_summary(store, p)
                        key = (summary.pk, p["annotator"])
                        first = answers.setdefault(key, (p, []))
                        first[1].extend(p["spans"])  # flat rows of one annotator add up to one answer
                    done += 1
                    progress(done, None)
        store.problems.raise_if_any()
        for (summary_id, annotator), (p, spans) in answers.items():
            SpanAnswer.objects.update_or_create(
                summary_id=summary_id, annotator=annotator, source=AnswerSource.IMPORTED,
                defaults={"spans": as_json(clean_spans(words(p["summary"]), [tuple(s) for s in spans])), "n_words": p["n_words"]},
            )
            store.report.count("span_answers", True)

    return run


def _store_summary(store: Store, p: dict):
    document = store.document(p["article_id"], origin=p["origin"], id_field="article_id", dataset=p["dataset"], text=p["article"],
                              sentences=lambda: store.sentences.split(p["article"]), metadata={"source": "spans"})
    summary = store.summary(document, p["system"], origin=p["origin"], text=p["summary"], external_id=p["record_id"] or "",
                            sentences=lambda: store.sentences.split(p["summary"]))
    store.item(document, summary)
    return summary


import_span_records = _importer(offsets=False)
import_span_offsets = _importer(offsets=True)
