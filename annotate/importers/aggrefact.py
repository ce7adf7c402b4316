"""AggreFact (Tang et al., ACL 2023) and LLM-AggreFact (Tang et al., 2024) benchmark importers.

**AggreFact** (format ``aggrefact``): a CSV with the header ``dataset, origin, id, doc, summary,
model_name, label, cut`` and any number of ``<system>_score`` columns (a leading unnamed index column, as
pandas writes it, is ignored). One row is one summary:

* ``dataset``: the source benchmark (XSumFaith, FRANK, SummEval, ...), kept as the document's
  ``metadata["benchmark"]``; ``origin``: ``cnndm`` or ``xsum`` (also ``cnn/dm``, ``bbc``), the
  document's dataset; ``id``: the article id in that benchmark (the document is ``<dataset>:<id>``);
* ``doc``, ``summary``: texts; ``model_name``: the summarizer (the summary's system);
* ``label``: 1 consistent, 0 inconsistent, stored as the human ``Factuality`` (1.0 / 0.0);
* ``cut``: ``val`` (also ``valid``, ``validation``, ``dev``) or ``test``: the document's split;
* ``<system>_score``: one detector's score (higher = more consistent), stored as the imported metric
  ``<system>``; an empty cell is a missing score.

**LLM-AggreFact** (format ``llm_aggrefact``): CSV or JSON lines (``.jsonl``) with ``dataset, doc, claim,
label`` (optionally ``split`` and ``contamination_identifier``). One row is one claim checked against
its document:

* ``dataset`` (AggreFact-CNN, TofuEval-MediaS, WiCE, ...) is kept as ``metadata["benchmark"]``;
  AggreFact-CNN / AggreFact-XSum documents get the dataset ``cnndm`` / ``xsum``, the others ``other``;
* documents are keyed by ``<dataset>:<sha1 of the text>`` (a document shared by several claims is
  stored once); a claim is a one-sentence summary of system ``claim-<sha1 of the claim>``;
* ``label``: 1 supported, 0 unsupported, stored as ``Factuality``;
* the split is the ``split`` column (``dev`` or ``test``), else the file name when it names exactly
  one of them (the benchmark ships ``dev`` and ``test`` files), else none.

The report evaluates LLM-AggreFact as its authors do: balanced accuracy per dataset with a claim
predicted supported when the checker's probability exceeds 0.5, then the unweighted mean over the
datasets; a threshold tuned on each dataset's dev split is shown beside it (docs/analysis.md).

Both importers refuse a file naming what is wrong (file, line, column) and store nothing then; a
re-import creates nothing new; a row that repeats a document or summary with another text or another
label is refused.
"""
from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Callable, Iterator
from pathlib import Path

from annotate.models import Dataset, Document, Split, Summary

from . import limits as import_limits
from .base import ImportFailed, RecordReader, batched, every, iter_json_lines
from .fields import check_model_values
from .store import Store

AGGREFACT_COLUMNS = ("dataset", "origin", "id", "doc", "summary", "model_name", "label", "cut")
LLM_AGGREFACT_COLUMNS = ("dataset", "doc", "claim", "label")
LLM_AGGREFACT_OPTIONAL = ("split", "contamination_identifier")
SCORE_SUFFIX = "_score"
ORIGINS = {"cnndm": Dataset.CNNDM.value, "cnn/dm": Dataset.CNNDM.value, "cnn_dm": Dataset.CNNDM.value, "cnn": Dataset.CNNDM.value,
           "xsum": Dataset.XSUM.value, "bbc": Dataset.XSUM.value}
CUTS = {"val": Split.VALID.value, "valid": Split.VALID.value, "validation": Split.VALID.value, "dev": Split.VALID.value,
        "test": Split.TEST.value}
LLM_DATASETS = {"aggrefact-cnn": Dataset.CNNDM.value, "aggrefact-xsum": Dataset.XSUM.value}
LABELS = {"1": 1.0, "0": 0.0, "1.0": 1.0, "0.0": 0.0, "true": 1.0, "false": 0.0}
METRIC_BOUND = 1e9
BATCH = 256


def _iter_csv(path: Path, required: tuple[str, ...], optional: tuple[str, ...] = (), *, score_columns: bool = False) -> Iterator[tuple[int, dict]]:
    """``(line, row)`` of a UTF-8 CSV whose header has the ``required`` columns; unknown columns are refused."""
    limits = import_limits.current()
    import_limits.check_file_size(path, limits)
    csv.field_size_limit(max(csv.field_size_limit(), limits.max_string_chars + 1))
    try:
        with path.open("r", encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            header = list(reader.fieldnames or [])
            if header and header[0] in ("", "Unnamed: 0"):
                header = header[1:]  # pandas' index column
            missing = [c for c in required if c not in header]
            if missing:
                raise ImportFailed(f"the header lacks the column(s) {', '.join(missing)}; expected {', '.join(required)}", path=path, record="line 1")
            unknown = [c for c in header if c not in required and c not in optional and not (score_columns and c.endswith(SCORE_SUFFIX) and len(c) > len(SCORE_SUFFIX))]
            if unknown:
                hint = f"; detector scores go in columns named <system>{SCORE_SUFFIX}" if score_columns else ""
                raise ImportFailed(f"unknown column(s) {', '.join(repr(c) for c in unknown)}{hint}", path=path, record="line 1")
            for row in reader:
                line = reader.line_num
                if None in row:
                    raise ImportFailed("more cells than header columns", path=path, record=f"line {line}")
                for column, value in row.items():
                    if value is None:
                        raise ImportFailed("fewer cells than header columns", path=path, record=f"line {line}", field=column)
                    import_limits.check_string(value, column, path=path, record=f"line {line}", limits=limits)
                yield line, row
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"not valid UTF-8 text (byte 0x{exc.object[exc.start]:02x}); save the file as UTF-8", path=path) from exc
    except csv.Error as exc:
        raise ImportFailed(f"malformed CSV ({exc})", path=path) from exc


def _label(record: RecordReader, name: str = "label") -> float:
    raw = record.get(name)
    if isinstance(raw, bool):
        return 1.0 if raw else 0.0
    if isinstance(raw, (int, float)):
        raw = str(raw)
    value = LABELS.get(str(raw).strip().lower()) if raw is not None else None
    if value is None:
        raise record.fail(f"expected 1 (consistent) or 0 (inconsistent), got {raw!r}", name)
    return value


def _choice(record: RecordReader, name: str, table: dict[str, str], expected: str) -> str:
    raw = record.text(name)
    value = table.get(raw.strip().lower())
    if value is None:
        raise record.fail(f"unknown {name} {raw!r}; expected {expected}", name)
    return value


class _Seen:
    """Facts a later row must agree with: a document's split, a summary's label."""

    def __init__(self) -> None:
        self.values: dict[tuple, tuple[object, str]] = {}

    def check(self, key: tuple, value: object, record: RecordReader, field: str, what: str) -> None:
        where = f"{Path(record.path).name}, record {record.index}"
        first = self.values.setdefault(key, (value, where))
        if first[0] != value:
            raise record.fail(f"{what} was {first[0]!r} at {first[1]}, here {value!r}", field)


def _parse_aggrefact(record: RecordReader, score_columns: list[str]) -> dict:
    benchmark = record.text("dataset").strip()
    doc_id = f"{benchmark}:{record.text('id').strip()}"
    system = record.text("model_name").strip()
    # Checked while parsing, before spaCy splits the batch (the store checks every value again).
    check_model_values(Document, {"external_id": doc_id}, path=record.path, record=record.index, names={"external_id": "id"})
    check_model_values(Summary, {"system": system}, path=record.path, record=record.index, names={"system": "model_name"})
    scores = {}
    for column in score_columns:
        cell = record.get(column)
        if cell is None or not str(cell).strip():
            continue
        try:
            value = float(cell)
        except ValueError:
            raise record.fail(f"expected a number, got {cell!r}", column) from None
        if not math.isfinite(value) or abs(value) > METRIC_BOUND:
            raise record.fail(f"expected a finite number within ±{METRIC_BOUND:g}, got {cell!r}", column)
        scores[column[: -len(SCORE_SUFFIX)]] = value
    return {
        "benchmark": benchmark, "doc_id": doc_id, "dataset": _choice(record, "origin", ORIGINS, "cnndm or xsum"),
        "split": _choice(record, "cut", CUTS, "val or test"), "doc": record.text("doc"), "summary": record.text("summary"),
        "system": system, "label": _label(record), "scores": scores, "origin": record,
    }


def _run(
    store: Store, paths: list[Path], progress: Callable[[int, int | None], None],
    batches: Callable[[Path], Iterator[list[dict]]], texts: Callable[[dict], list[str]], write: Callable[[dict, _Seen], Document],
) -> None:
    """The loop both importers share: parse a batch, split its new texts in one spaCy pass, write each row."""
    done = 0
    progress = every(progress, 100)
    seen = _Seen()
    for path in paths:
        for records in batches(path):
            store.sentences.prime(text for r in records for text in texts(r))
            for r in records:
                with store.problems.of_record():  # a value too long for its field names this row; the run goes on
                    store.items_for_document(write(r, seen))
                    store.report.records += 1
                done += 1
                progress(done, None)
            store.sentences.clear()


def import_aggrefact(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    def batches(path: Path) -> Iterator[list[dict]]:
        score_columns = [c for c in _header(path) if c.endswith(SCORE_SUFFIX) and c not in AGGREFACT_COLUMNS]
        for batch in batched(_iter_csv(path, AGGREFACT_COLUMNS, score_columns=True), BATCH):
            yield store.problems.parse_each(
                batch, lambda pair: _parse_aggrefact(RecordReader(pair[1], path=path, index=f"line {pair[0]}"), score_columns),
            )

    def write(r: dict, seen: _Seen) -> Document:
        seen.check(("split", r["doc_id"]), r["split"], r["origin"], "cut", f"the split of document {r['doc_id']!r}")
        seen.check(("dataset", r["doc_id"]), r["dataset"], r["origin"], "origin", f"the origin of document {r['doc_id']!r}")
        seen.check(("label", r["doc_id"], r["system"]), r["label"], r["origin"], "label", f"the label of {r['system']!r} on {r['doc_id']!r}")
        document = store.document(
            r["doc_id"], origin=r["origin"], dataset=r["dataset"], split=r["split"], text=r["doc"],
            sentences=lambda: store.sentences.split(r["doc"]), metadata={"source": "aggrefact", "benchmark": r["benchmark"]},
        )
        summary = store.summary(
            document, r["system"], origin=r["origin"], system_field="model_name", text=r["summary"], sentences=lambda: store.sentences.split(r["summary"]),
            human_scores={"Factuality": r["label"]}, metadata={"source": "aggrefact", "benchmark": r["benchmark"]},
        )
        for metric, value in r["scores"].items():
            store.score(summary, metric, value, origin=r["origin"], field=metric)
        return document

    _run(store, paths, progress, batches, lambda r: ([] if store.has_document(r["doc_id"]) else [r["doc"]]) + [r["summary"]], write)


def _header(path: Path) -> list[str]:
    try:
        with path.open("r", encoding="utf-8", newline="") as handle:
            return next(csv.reader(handle), [])
    except UnicodeDecodeError as exc:
        raise ImportFailed("not valid UTF-8 text; save the file as UTF-8", path=path) from exc


def _split_from_name(path: Path) -> str:
    name = path.name.lower()
    hits = {split for word, split in (("dev", Split.VALID.value), ("test", Split.TEST.value)) if word in name}
    return hits.pop() if len(hits) == 1 else Split.NONE.value


def _digest(text: str, length: int) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def _llm_rows(path: Path) -> Iterator[tuple[str, dict]]:
    if path.suffix.lower() in (".jsonl", ".json"):
        allowed = {*LLM_AGGREFACT_COLUMNS, *LLM_AGGREFACT_OPTIONAL}
        for line, raw in iter_json_lines(path):
            if isinstance(raw, dict):
                unknown = sorted(set(raw) - allowed)
                if unknown:
                    raise ImportFailed(f"unknown field(s) {', '.join(unknown)}; expected {', '.join(LLM_AGGREFACT_COLUMNS)}", path=path, record=f"line {line}")
            yield f"line {line}", raw
    else:
        for line, row in _iter_csv(path, LLM_AGGREFACT_COLUMNS, LLM_AGGREFACT_OPTIONAL):
            yield f"line {line}", row


def _parse_claim(record: RecordReader, file_split: str) -> dict:
    benchmark = record.text("dataset").strip()
    doc, claim = record.text("doc"), record.text("claim")
    split = file_split
    if str(record.get("split") or "").strip():
        split = _choice(record, "split", CUTS, "dev or test")
    return {
        "benchmark": benchmark, "doc_id": f"{benchmark}:{_digest(doc, 16)}"[:200], "doc": doc, "claim": claim,
        "system": f"claim-{_digest(claim, 12)}", "label": _label(record), "split": split, "origin": record,
        "contamination": str(record.get("contamination_identifier") or ""),
    }


def import_llm_aggrefact(store: Store, paths: list[Path], progress: Callable[[int, int | None], None]) -> None:
    def batches(path: Path) -> Iterator[list[dict]]:
        file_split = _split_from_name(path)
        for batch in batched(_llm_rows(path), BATCH):
            yield store.problems.parse_each(
                batch, lambda pair: _parse_claim(RecordReader(pair[1], path=path, index=pair[0]), file_split),
            )

    def write(r: dict, seen: _Seen) -> Document:
        seen.check(("split", r["doc_id"]), r["split"], r["origin"], "split", f"the split of this document of {r['benchmark']}")
        seen.check(("label", r["doc_id"], r["system"]), r["label"], r["origin"], "label", "the label of this claim on this document")
        metadata = {"source": "llm-aggrefact", "benchmark": r["benchmark"]}
        document = store.document(
            r["doc_id"], origin=r["origin"], id_field="doc", dataset=LLM_DATASETS.get(r["benchmark"].lower(), Dataset.OTHER.value),
            split=r["split"], text=r["doc"], sentences=lambda: store.sentences.split(r["doc"]), metadata=metadata,
        )
        if r["contamination"]:
            metadata = {**metadata, "contamination_identifier": r["contamination"]}
        # A claim is the unit of the benchmark's label: one sentence, never re-split.
        store.summary(
            document, r["system"], origin=r["origin"], text=r["claim"], sentences=[r["claim"].strip()],
            human_scores={"Factuality": r["label"]}, metadata=metadata,
        )
        return document

    _run(store, paths, progress, batches, lambda r: [] if store.has_document(r["doc_id"]) else [r["doc"]], write)
