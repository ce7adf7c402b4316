"""FRANK benchmark importer (Pagnoni et al., 2021).

PATH is FRANK's data folder: ``human_annotations.json`` (one record per annotated summary) and
``articles/<hash>.json`` (article, its lines, each model's summary lines, references, entity counts,
the negative entity and trap sentences). Every annotated summary becomes a ``Summary`` with its human
scores; its article becomes a ``Document`` with its traps, and (in FRANK campaigns) an item.

PATH may also be a ``.zip`` of such a folder (FactLab's FRANK export, see ``annotate.frank.exporter``).
When the folder holds ``human_annotations_sentence.json`` (FRANK's per-sentence file: per summary sentence
``{annotator: [codes]}``, ``"NoE"`` for no error, an empty list for an error without a category), every
annotator's labels become imported judgements.
"""
from __future__ import annotations

import tempfile
import zipfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from annotate.frank.article_files import article_stem
from annotate.importers.base import ImportFailed, RecordReader, iter_json_array, load_json_file
from annotate.importers.limits import PATH_ID, safe_extract_zip
from annotate.importers.store import Store
from annotate.models import Dataset, Split, Summary
from taxonomies import frank as frank_typology

DATASET_NAMES = {"cnndm": Dataset.CNNDM, "bbc": Dataset.XSUM, "xsum": Dataset.XSUM, "other": Dataset.OTHER}
SENTENCE_FILE = "human_annotations_sentence.json"
NO_ERROR = "NoE"
SCORE_KEYS_SKIPPED = {"hash", "model_name", "dataset", "split"}


def _resolve(paths: list[Path]) -> tuple[Path, Path]:
    if len(paths) != 1:
        raise ImportFailed("the frank format takes one path: FRANK's data folder (with human_annotations.json and articles/)")
    root = paths[0]
    if root.is_file():
        root = root.parent
    annotations, articles = root / "human_annotations.json", root / "articles"
    if not annotations.is_file():
        raise ImportFailed("human_annotations.json not found in the FRANK folder", path=root)
    if not articles.is_dir():
        raise ImportFailed("articles/ folder not found in the FRANK folder", path=root)
    return annotations, articles


def _read_article(path: Path) -> dict:
    data = load_json_file(path)
    if not isinstance(data, dict):
        raise ImportFailed("expected a JSON object", path=path)
    return data


def _extract_zip(path: Path, target: Path) -> Path:
    """Extract a zipped FRANK folder into ``target`` (within the import limits); returns the folder holding human_annotations.json."""
    safe_extract_zip(path, target)
    candidates = sorted(p.parent for p in target.rglob("human_annotations.json"))
    if not candidates:
        raise ImportFailed("human_annotations.json not found in the zip", path=path)
    return candidates[0]


def import_frank(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    if len(paths) == 1 and paths[0].is_file() and zipfile.is_zipfile(paths[0]):
        with tempfile.TemporaryDirectory(prefix="factlab-frank-") as tmp:
            _import_frank_folder(store, [_extract_zip(paths[0], Path(tmp))], progress)
    else:
        _import_frank_folder(store, paths, progress)


def _import_sentence_judgements(store: Store, path: Path, summaries: dict[tuple[str, str], Summary]) -> None:
    """Import FRANK's per-sentence file: one judgement per (summary sentence, annotator)."""
    for index, raw in iter_json_array(path):
        with store.problems.of_record():
            record = RecordReader(raw, path=path, index=index)
            key = (record.text("hash"), record.text("model_name"))
            summary = summaries.get(key) or Summary.objects.filter(
                document__campaign=store.campaign, document__external_id=key[0], system=key[1], edited_from=None
            ).first()
            if summary is None:
                raise record.fail(f"no summary of model {key[1]!r} for hash {key[0]!r} in human_annotations.json", "model_name")
            per_sentence = record.get("summary_sentences_annotations")
            if not isinstance(per_sentence, list) or not all(isinstance(x, dict) for x in per_sentence):
                raise record.fail("expected a list of {annotator: [codes]} objects", "summary_sentences_annotations")
            for sentence_index, annotators in enumerate(per_sentence):
                for annotator, codes in annotators.items():
                    where = f"summary_sentences_annotations[{sentence_index}].{annotator}"
                    if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                        raise record.fail("expected a list of category codes", where)
                    try:
                        categories = [frank_typology.normalize_code(c) for c in codes if c != NO_ERROR]
                    except ValueError as exc:
                        raise record.fail(str(exc), where) from exc
                    worker = store.worker("frank", str(annotator), origin=record, field=where)
                    # "NoE" alone is "no error"; an empty list an error without a category (FactLab's exports of
                    # QAGS-style yes/no answers).
                    store.judgement(summary, sentence_index, worker, NO_ERROR in codes and not categories, categories)


def _import_frank_article(
    store: Store, article_hash: str, records: list[tuple[int, RecordReader]], articles_dir: Path, annotations_path: Path,
    imported: dict[tuple[str, str], Summary],
) -> int:
    """One article with its annotated summaries and traps; returns how many summary records it read."""
    done = 0
    # The id never becomes a path itself: FactLab's exports name other ids' files by a slug and a hash, and
    # FRANK's own hashes (and older exports' plain ids) name theirs as they are.
    article_path = articles_dir / f"{article_stem(article_hash)}.json"
    if not article_path.is_file() and PATH_ID.fullmatch(article_hash):
        article_path = articles_dir / f"{article_hash}.json"
    if not article_path.is_file():
        raise ImportFailed(
            f"no article file for hash {article_hash[:80]!r} (articles/{article_path.name})", path=annotations_path, record=records[0][0], field="hash"
        )
    article = RecordReader(_read_article(article_path), path=article_path, index=article_hash)
    first = records[0][1]
    dataset_name = first.text("dataset")
    if dataset_name not in DATASET_NAMES:
        raise first.fail(f"unknown dataset {dataset_name!r}; expected cnndm or bbc", "dataset")
    split = first.text("split", required=False)
    if split not in ("", Split.VALID, Split.TEST):
        raise first.fail(f"unknown split {split!r}; expected valid or test", "split")
    entities = article.get("entity_counter") or {}
    if not isinstance(entities, dict):
        raise article.fail("expected an object of entity counts", "entity_counter")
    document = store.document(
        article_hash, origin=first, id_field="hash",
        dataset=DATASET_NAMES[dataset_name],
        split=split,
        text=article.text("article"),
        sentences=article.string_list("article_lines"),
        url=article.text("url", required=False)[:500],
        entities=list(entities),
        negative_entity=article.text("negative_entity", required=False),
        metadata={"source": "frank", "frank_id": article.text("id", required=False)},
    )
    reference_text = next(
        (article.get(k) for k in ("reference", "bart_reference", "Gold") if isinstance(article.get(k), str) and article.get(k).strip()),
        None,
    )
    if reference_text:
        ref_lines = article.get("Gold_lines") if article.get("Gold") == reference_text else None
        store.summary(
            document, "reference", origin=article, system_field="Gold", text=reference_text, is_reference=True,
            sentences=ref_lines if isinstance(ref_lines, list) else [reference_text],
        )
    for index, record in records:
        model = record.text("model_name")
        lines = article.get(f"{model}_lines")
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            raise ImportFailed(
                f"the article file has no '{model}_lines' for model {model!r}", path=annotations_path, record=index, field="model_name"
            )
        scores = {}
        for key in record.record:
            if key in SCORE_KEYS_SKIPPED:
                continue
            scores[key] = record.number(key, low=0.0, high=1.0)  # FRANK's human scores are shares of annotators
        if "Factuality" not in scores:
            raise record.fail("missing", "Factuality")
        imported[(article_hash, model)] = store.summary(
            document, model, origin=record, system_field="model_name", text=" ".join(line.strip() for line in lines), sentences=lines, human_scores=scores
        )
        done += 1
    traps = article.get("traps") or []
    for position, trap in enumerate(traps):
        if not (isinstance(trap, list) and len(trap) == 2 and all(isinstance(x, str) for x in trap)):
            raise article.fail(f"trap {position} is not a [code, sentence] pair", "traps")
        code, sentence = trap
        if code not in frank_typology.TRAP_LABELS:
            raise article.fail(f"unknown trap code {code!r}; expected one of {', '.join(frank_typology.TRAP_LABELS)}", "traps")
        factual, category = frank_typology.TRAP_LABELS[code]
        store.trap(document, code, sentence, factual, category or "", origin=article)
    store.items_for_document(document)
    store.report.records += len(records)
    return done


def _import_frank_folder(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    annotations_path, articles_dir = _resolve(paths)
    imported: dict[tuple[str, str], Summary] = {}
    by_article: dict[str, list[tuple[int, RecordReader]]] = defaultdict(list)
    for index, raw in iter_json_array(annotations_path):
        with store.problems.of_record():
            record = RecordReader(raw, path=annotations_path, index=index)
            by_article[record.text("hash")].append((index, record))
    total = sum(len(v) for v in by_article.values())
    done = 0
    progress(done, total)
    for article_hash, records in by_article.items():
        with store.problems.of_record():
            done += _import_frank_article(store, article_hash, records, articles_dir, annotations_path, imported)
        progress(done, total)
    sentence_path = annotations_path.parent / SENTENCE_FILE
    # Sentence judgements name the summaries above: after a wrong summary record they would only repeat it.
    if sentence_path.is_file() and not store.problems.found:
        _import_sentence_judgements(store, sentence_path, imported)
