"""QAGS MTurk importer (Wang et al., 2020): per-sentence yes/no answers of several workers.

JSON lines, each ``{"article": str, "summary_sentences": [{"sentence": str, "responses":
[{"worker_id": id, "response": "yes"|"no"}]}]}``, optionally with ``id``, ``model`` or ``system`` and
``dataset`` (``cnndm``, ``xsum``, or ``bbc`` as FRANK writes XSum).
Workers are created with provider ``qags`` so agreement can be computed on their judgements.

The document's dataset is, in this order: the record's ``dataset``; the ``dataset`` option
(``import_dataset --dataset``, API field ``dataset``); the file name (QAGS releases ``mturk_cnndm.jsonl``
and ``mturk_xsum.jsonl``); else ``other`` (never a guess).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from annotate.models import Dataset

from .base import ImportFailed, RecordReader, iter_json_lines
from .store import Store

DATASET_ALIASES = {"cnndm": Dataset.CNNDM, "cnn_dm": Dataset.CNNDM, "cnn": Dataset.CNNDM, "xsum": Dataset.XSUM, "bbc": Dataset.XSUM}


def dataset_from_name(path: Path) -> str | None:
    """``xsum``/``cnndm`` when the file name says so (``mturk_xsum.jsonl``), else None."""
    name = path.name.lower()
    hits = {dataset for alias, dataset in DATASET_ALIASES.items() if alias in name}
    return hits.pop() if len(hits) == 1 else None


def import_qags(
    store: Store, paths: list[Path], progress: Callable[[int, int | None], None], *, dataset: str | None = None
) -> None:
    if dataset is not None and dataset not in Dataset.values:
        raise ImportFailed(f"unknown dataset {dataset!r}; expected one of {', '.join(Dataset.values)}", field="dataset")
    done = 0
    for path in paths:
        file_dataset = dataset or dataset_from_name(path) or Dataset.OTHER
        for line, raw in iter_json_lines(path):
            with store.problems.of_record():
                record = RecordReader(raw, path=path, index=f"line {line}")
                article = record.text("article")
                sentences_raw = record.obj_list("summary_sentences")
                if not sentences_raw:
                    raise record.fail("has no sentences", "summary_sentences")
                sentences: list[str] = []
                answers: list[tuple[int, str, bool]] = []
                for s_index, entry in enumerate(sentences_raw):
                    field = f"summary_sentences[{s_index}]"
                    sentence = entry.get("sentence")
                    if not isinstance(sentence, str) or not sentence.strip():
                        raise record.fail("missing sentence text", f"{field}.sentence")
                    sentences.append(sentence.strip())
                    responses = entry.get("responses")
                    if not isinstance(responses, list):
                        raise record.fail("expected a list of responses", f"{field}.responses")
                    for r_index, response in enumerate(responses):
                        where = f"{field}.responses[{r_index}]"
                        if not isinstance(response, dict) or "worker_id" not in response:
                            raise record.fail("missing worker_id", where)
                        answer = str(response.get("response", "")).strip().lower()
                        if answer not in ("yes", "no"):
                            raise record.fail(f"response must be 'yes' or 'no', got {response.get('response')!r}", where)
                        answers.append((s_index, str(response["worker_id"]), answer == "yes"))
                record_dataset = file_dataset
                if record.get("dataset") is not None:
                    record_dataset = DATASET_ALIASES.get(str(record.get("dataset")).strip().lower())
                    if record_dataset is None:
                        raise record.fail(f"unknown dataset {record.get('dataset')!r}; expected cnndm, xsum or bbc", "dataset")
                external_id = str(record.get("id") or hashlib.sha1(article.encode()).hexdigest()[:20])
                document = store.document(
                    external_id, origin=record, dataset=record_dataset, text=article, sentences=lambda: store.sentences.split(article),
                    metadata={"source": "qags"},
                )
                system = str(record.get("model") or record.get("system") or "qags")
                summary = store.summary(document, system, origin=record, system_field="model", text=" ".join(sentences), sentences=sentences)
                for s_index, worker_id, factual in answers:
                    store.judgement(summary, s_index, store.worker("qags", worker_id, origin=record, field="worker_id"), factual, [])
                store.items_for_document(document)
                store.report.records += 1
            done += 1
            progress(done, None)
