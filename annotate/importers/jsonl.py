"""FactLab's own import format for new campaigns: JSON lines, one document per line.

Each line::

    {"id": "doc-1",                      # required, unique in the campaign
     "text": "The article ...",          # required
     "dataset": "cnndm",                 # optional: cnndm, xsum or other (default other)
     "split": "test",                    # optional: valid, test or empty
     "url": "https://...",               # optional
     "sentences": ["The article ..."],   # optional; spaCy splits the text when absent
     "entities": ["Paris", "Lyon"],      # optional: entities of the article for the entity question
     "negative_entity": "Madrid",        # optional: an entity NOT in the article
     "traps": [{"code": "F1", "text": "..."}],   # optional: trap sentences (FRANK codes)
     "summaries": [                      # required, at least one
        {"system": "bart", "text": "...", "sentences": [...], "is_reference": false,
         "human_scores": {"Factuality": 0.5}}
     ]}

FRANK campaigns get one item per document, BUMP campaigns one per reference summary (and type).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from annotate.models import Dataset, Split
from taxonomies import frank as frank_typology

from .base import RecordReader, batched, every, iter_json_lines
from .store import Store

DATASETS = {d.value for d in Dataset}
SPLITS = {s.value for s in Split}
HUMAN_SCORE_BOUND = 1e6  # human ratings are shares, Likert points or counts


BATCH = 256


def _parse(record: RecordReader, line: int, path: Path) -> dict:
    doc_id = record.text("id")
    text = record.text("text")
    dataset = record.text("dataset", required=False, default=Dataset.OTHER)
    if dataset not in DATASETS:
        raise record.fail(f"unknown dataset {dataset!r}; expected one of {', '.join(sorted(DATASETS))}", "dataset")
    split = record.text("split", required=False)
    if split not in SPLITS:
        raise record.fail(f"unknown split {split!r}; expected valid, test or empty", "split")
    summaries = record.obj_list("summaries")
    if not summaries:
        raise record.fail("needs at least one summary", "summaries")
    parsed = []
    for s_index, raw_summary in enumerate(summaries):
        sub = RecordReader(raw_summary, path=path, index=f"line {line}, summary {s_index}")
        system = sub.text("system")
        summary_text = sub.text("text")
        is_reference = sub.get("is_reference", False)
        if not isinstance(is_reference, bool):
            raise sub.fail("expected true or false", "is_reference")
        scores = sub.get("human_scores") or {}
        if not isinstance(scores, dict):
            raise sub.fail("expected an object of numbers", "human_scores")
        scores = {key: RecordReader(scores, path=path, index=sub.index).number(key, low=-HUMAN_SCORE_BOUND, high=HUMAN_SCORE_BOUND) for key in scores}
        parsed.append((system, summary_text, sub.string_list("sentences", required=False), is_reference, scores))
    traps = []
    for t_index, trap in enumerate(record.obj_list("traps", required=False)):
        sub = RecordReader(trap, path=path, index=f"line {line}, trap {t_index}")
        code = sub.text("code")
        if code not in frank_typology.TRAP_LABELS:
            raise sub.fail(f"unknown trap code {code!r}; expected one of {', '.join(frank_typology.TRAP_LABELS)}", "code")
        traps.append((code, sub.text("text")))
    return {
        "id": doc_id, "text": text, "dataset": dataset, "split": split, "summaries": parsed, "traps": traps,
        "sentences": record.string_list("sentences", required=False),
        "url": record.text("url", required=False)[:500],
        "entities": record.string_list("entities", required=False),
        "negative_entity": record.text("negative_entity", required=False),
        "origin": record,  # names this record if a later one reuses its id with another text
    }


def import_jsonl(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    done = 0
    progress = every(progress, 100)
    for path in paths:
        for batch in batched(iter_json_lines(path), BATCH):
            records = store.problems.parse_each(
                batch, lambda row: _parse(RecordReader(row[1], path=path, index=f"line {row[0]}"), row[0], path),
            )
            # Texts without given sentences are split by spaCy in one pass per batch, once per distinct text.
            store.sentences.prime(
                text
                for r in records
                if not store.has_document(r["id"])
                for text in ([] if r["sentences"] else [r["text"]]) + [s[1] for s in r["summaries"] if not s[2]]
            )
            for r in records:
                with store.problems.of_record():  # a value too long for its field names this record; the run goes on
                    _store_record(store, r)
                done += 1
                progress(done, None)
            store.sentences.clear()


def _store_record(store: Store, r: dict) -> None:
    document = store.document(
        r["id"], origin=r["origin"], dataset=r["dataset"], split=r["split"], text=r["text"],
        sentences=r["sentences"] or (lambda: store.sentences.split(r["text"])),
        url=r["url"], entities=r["entities"], negative_entity=r["negative_entity"], metadata={"source": "jsonl"},
    )
    for code, trap_text in r["traps"]:
        factual, category = frank_typology.TRAP_LABELS[code]
        store.trap(document, code, trap_text, factual, category or "", origin=r["origin"])
    for index, (system, summary_text, sentences, is_reference, scores) in enumerate(r["summaries"]):
        summary = store.summary(
            document, system, origin=r["origin"], system_field=f"summaries[{index}].system", text=summary_text,
            sentences=sentences or (lambda: store.sentences.split(summary_text)),
            is_reference=is_reference, human_scores=scores,
        )
        if is_reference:
            store.items_for_reference(document, summary)
    store.items_for_document(document)
    store.report.records += 1
