"""Parquet exports laid out as a Hugging Face ``datasets`` folder, delivered as one zip.

The zip holds ``README.md`` (a dataset card whose YAML header names the license and one ``configs`` entry
per table) and ``data/<table>.parquet``; unzipped, ``datasets.load_dataset(folder, "<table>")`` reads it.
Row tables (judgements, edits, scores) have fixed column types and are written in batches, so memory
stays flat; per-summary tables of a protocol (FRANK summary scores, BUMP pairs) are small and get their
types from the records. The zip is built in a temporary file and then streamed.
"""
from __future__ import annotations

import json
import tempfile
import time
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from annotate.models import Campaign

BATCH_ROWS = 5000
STREAM_CHUNK = 256 * 1024

_TYPES: dict[str, pa.DataType] = {
    "summary_id": pa.int64(), "sentence_index": pa.int64(), "edited_summary_id": pa.int64(), "word_distance": pa.int64(),
    "factual": pa.bool_(), "not_applicable": pa.bool_(), "categories": pa.list_(pa.string()),
    "lead_time_seconds": pa.float64(), "value": pa.float64(),
    "label_factual": pa.bool_(), "label_categories": pa.list_(pa.string()), **{
        f"label_{name}": pa.float64() for name in (
            "posterior", "low", "high", "categories_posterior", "categories_low", "categories_high", "difficulty")
    },
    "worker_ability": pa.float64(), "direction": pa.int64(), "human_factuality": pa.float64(),
    "unified_types": pa.list_(pa.string()),
}
# Columns whose values are objects of varying keys: written as JSON text (``json.loads`` reads them back).
_JSON_TEXT_COLUMNS = frozenset({"human_scores"})
_LABEL_COLUMNS = (
    "label_method", "label_factual", "label_posterior", "label_low", "label_high", "label_categories",
    "label_categories_posterior", "label_categories_low", "label_categories_high", "label_difficulty",
)
_COMMON = ("record_type", "campaign", "document_id", "dataset", "split", "summary_id", "system")
KIND_COLUMNS: dict[str, tuple[str, ...]] = {
    "judgements": (*_COMMON, "sentence_index", "worker", "factual", "categories", "lead_time_seconds", "source", "created_at", *_LABEL_COLUMNS, "worker_ability"),
    "edits": (
        *_COMMON, "worker", "source", "requested_error_type", "corrected_error_type", "not_applicable", "edited_summary_id",
        "edit_text", "word_distance", "review_status", "created_at",
    ),
    "scores": (*_COMMON, "metric", "config_key", "value", "direction", "source", "created_at"),
    "summaries": (
        *_COMMON, "summary_role", "summary_text", "source", "human_factuality", "human_scores", "unified_types",
        "unified_types_source",
    ),
}


def row_schema(kind: str) -> pa.Schema:
    """The Parquet schema of one row kind of :func:`annotate.exporters.tabular.iter_rows`."""
    return pa.schema([(name, _TYPES.get(name, pa.string())) for name in KIND_COLUMNS[kind]])


def answer_schema(columns: Mapping[str, str]) -> pa.Schema:
    """The Parquet schema of a protocol's answer rows: the shared columns every row has, then the kind's own
    ``columns`` (name -> pyarrow type alias)."""
    shared = [(name, _TYPES.get(name, pa.string())) for name in (*_COMMON, "worker", "source", "created_at")]
    return pa.schema(shared + [(name, pa.type_for_alias(alias)) for name, alias in columns.items()])


@dataclass
class Table:
    """One table of the export: ``data/<name>.parquet`` and a ``configs`` entry of the card."""

    name: str
    rows: Iterable[dict[str, Any]]
    description: str
    schema: pa.Schema | None = None  # None: types inferred from the (materialised) records
    n_rows: int = field(default=0, init=False)


def _column(values: list[Any]) -> pa.Array:
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types (e.g. int and text ids): keep them as text
        return pa.array([None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values], pa.string())


def _inferred_table(records: list[dict[str, Any]]) -> pa.Table:
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record))
    return pa.table({name: _column([r.get(name) for r in records]) for name in names})


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def write_table(table: Table, fileobj) -> int:
    """Write ``table`` as Parquet to ``fileobj``; returns its number of rows (0 writes nothing)."""
    if table.schema is None:
        data = _inferred_table(list(table.rows))
        if data.num_rows:
            pq.write_table(data, fileobj, compression="zstd")
        return data.num_rows
    names = table.schema.names
    writer: pq.ParquetWriter | None = None
    batch: list[dict[str, Any]] = []
    n = 0

    def flush() -> None:
        nonlocal writer
        if writer is None:
            writer = pq.ParquetWriter(fileobj, table.schema, compression="zstd")
        records = [{k: _json_text(r.get(k)) if k in _JSON_TEXT_COLUMNS else r.get(k) for k in names} for r in batch]
        writer.write_table(pa.Table.from_pylist(records, schema=table.schema))
        batch.clear()

    for row in table.rows:
        batch.append(row)
        n += 1
        if len(batch) >= BATCH_ROWS:
            flush()
    if batch:
        flush()
    if writer is not None:
        writer.close()
    return n


def _yaml_text(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def dataset_card(campaign: Campaign, tables: list[Table], license_id: str) -> str:
    """README.md with the YAML header that ``datasets`` and the Hub read: license, pretty name, configs."""
    written = [t for t in tables if t.n_rows]
    lines = ["---", f"license: {_yaml_text(license_id)}", f"pretty_name: {_yaml_text(campaign.name)}", "configs:"]
    for index, table in enumerate(written):
        lines += [f"- config_name: {table.name}", "  data_files:", "  - split: train", f"    path: data/{table.name}.parquet"]
        if index == 0:
            lines.append("  default: true")
    lines += ["---", "", f"# {campaign.name}", ""]
    if campaign.description:
        lines += [campaign.description, ""]
    lines += [
        f"Exported by FactLab from the {campaign.kind} campaign `{campaign.slug}`. Workers appear as per-campaign",
        "pseudonyms. Columns are documented in FactLab's `docs/api.md` (section Exports).",
        "", "| config | rows | what |", "| --- | --- | --- |",
    ]
    lines += [f"| `{t.name}` | {t.n_rows} | {t.description} |" for t in written]
    empty = [t.name for t in tables if not t.n_rows]
    if empty:
        lines += ["", f"Empty, hence left out: {', '.join(empty)}."]
    lines += [
        "", "## Label uncertainty", "",
        f"Each judgement row carries its sentence's aggregated label under the `{campaign.label_model}` label model:",
        "`label_posterior` is the posterior probability of `label_factual`, `label_low`/`label_high` its 95% interval",
        "from what is known of the judging workers (docs/analysis.md), `label_categories*` the same for the error",
        "categories (a Jeffreys interval over the sentence's judgements) and",
        "`label_difficulty` GLAD's item difficulty (empty for other models), and `worker_ability` the judging worker's",
        "ability under the same model (GLAD's alpha; else their reliability). Empty until the model was fitted.",
    ]
    lines += [
        "", "## License", "",
        f"`{license_id}`" + ("" if license_id != "unknown" else ": the campaign states no license; ask its owner before reuse."),
        "", "## Loading", "", "```python", "from datasets import load_dataset",
        f'load_dataset("path/to/unzipped/folder", "{written[0].name if written else "<config>"}")', "```", "",
    ]
    return "\n".join(lines)


def stream_parquet_zip(campaign: Campaign, tables: list[Table], *, license_id: str | None = None) -> Iterator[bytes]:
    """Write every non-empty table and the card into a zip (in a temporary file), then stream the zip."""
    license_id = (license_id or campaign.license or "unknown").strip().lower()
    with tempfile.TemporaryFile() as spool:
        with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_STORED) as archive:  # Parquet is compressed already
            for table in tables:
                name = f"data/{table.name}.parquet"
                with tempfile.TemporaryFile() as part:
                    table.n_rows = write_table(table, part)
                    if table.n_rows:
                        part.seek(0)
                        info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
                        with archive.open(info, "w", force_zip64=True) as member:
                            while chunk := part.read(STREAM_CHUNK):
                                member.write(chunk)
            archive.writestr("README.md", dataset_card(campaign, tables, license_id))
        spool.seek(0)
        while chunk := spool.read(STREAM_CHUNK):
            yield chunk
