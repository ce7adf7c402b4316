"""FRANK benchmark importer (Pagnoni et al., 2021).

PATH is FRANK's data folder: ``human_annotations.json`` (one record per annotated summary) and
``articles/<hash>.json`` (article, its lines, each model's summary lines, references, entity counts,
the negative entity and trap sentences). Every annotated summary becomes a ``Summary`` with its human
scores; its article becomes a ``Document`` with its traps, and (in FRANK campaigns) an item.
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from annotate import frank_typology
from annotate.models import CampaignKind, Dataset, Split

from .base import ImportFailed, RecordReader, iter_json_array
from .store import Store

DATASET_NAMES = {"cnndm": Dataset.CNNDM, "bbc": Dataset.XSUM, "xsum": Dataset.XSUM}
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
    try:
        with path.open("r", encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"malformed JSON ({exc.msg} at line {exc.lineno})", path=path) from exc
    if not isinstance(data, dict):
        raise ImportFailed("expected a JSON object", path=path)
    return data


def import_frank(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    annotations_path, articles_dir = _resolve(paths)
    by_article: dict[str, list[tuple[int, RecordReader]]] = defaultdict(list)
    for index, raw in iter_json_array(annotations_path):
        record = RecordReader(raw, path=annotations_path, index=index)
        by_article[record.text("hash")].append((index, record))
    total = sum(len(v) for v in by_article.values())
    done = 0
    progress(done, total)
    for article_hash, records in by_article.items():
        article_path = articles_dir / f"{article_hash}.json"
        if not article_path.is_file():
            raise ImportFailed(f"no article file for hash {article_hash}", path=annotations_path, record=records[0][0], field="hash")
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
            article_hash,
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
                document, "reference", text=reference_text, is_reference=True,
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
            for key, value in record.record.items():
                if key in SCORE_KEYS_SKIPPED:
                    continue
                scores[key] = record.number(key)
            if "Factuality" not in scores:
                raise record.fail("missing", "Factuality")
            store.summary(document, model, text=" ".join(line.strip() for line in lines), sentences=lines, human_scores=scores)
            done += 1
        traps = article.get("traps") or []
        for position, trap in enumerate(traps):
            if not (isinstance(trap, list) and len(trap) == 2 and all(isinstance(x, str) for x in trap)):
                raise article.fail(f"trap {position} is not a [code, sentence] pair", "traps")
            code, sentence = trap
            if code not in frank_typology.TRAP_LABELS:
                raise article.fail(f"unknown trap code {code!r}; expected one of {', '.join(frank_typology.TRAP_LABELS)}", "traps")
            factual, category = frank_typology.TRAP_LABELS[code]
            store.trap(document, code, sentence, factual, category or "")
        if store.campaign.kind == CampaignKind.FRANK:
            store.item(document)
        store.report.records += len(records)
        progress(done, total)
