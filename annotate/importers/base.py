"""Shared machinery of the dataset importers: streaming readers, field checks, errors and the report."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson

ProgressCallback = Callable[[int, int | None], None]


class ImportFailed(Exception):
    """An import was refused. The message names the file, the record and the field at fault."""

    def __init__(self, message: str, *, path: str | Path | None = None, record: int | str | None = None, field: str | None = None):
        self.path = str(path) if path is not None else None
        self.record = record
        self.field = field
        self.detail = message
        where = []
        if self.path:
            where.append(Path(self.path).name)
        if record is not None:
            where.append(f"record {record}")
        if field:
            where.append(f"field '{field}'")
        super().__init__((", ".join(where) + ": " if where else "") + message)

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.path, "record": self.record, "field": self.field, "message": self.detail, "error": str(self)}


@dataclass
class ImportReport:
    """What an import did: rows created and rows that already existed, per kind of object."""

    campaign: str
    format: str
    records: int = 0
    created: Counter = field(default_factory=Counter)
    existing: Counter = field(default_factory=Counter)

    def count(self, kind: str, created: bool) -> None:
        (self.created if created else self.existing)[kind] += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "campaign": self.campaign,
            "format": self.format,
            "records": self.records,
            "created": dict(self.created),
            "existing": dict(self.existing),
        }

    def summary_line(self) -> str:
        made = ", ".join(f"{n} {k}" for k, n in sorted(self.created.items())) or "nothing new"
        return f"{self.records} records read into campaign '{self.campaign}': created {made}."


def iter_json_array(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, record)`` from a JSON file holding a top-level array, without loading it whole."""
    index = -1
    try:
        with path.open("rb") as handle:
            for index, record in enumerate(ijson.items(handle, "item", use_float=True)):
                yield index, record
    except (ijson.JSONError, ijson.IncompleteJSONError) as exc:
        raise ImportFailed(f"malformed JSON after record {index} ({exc})", path=path, record=index + 1) from exc
    if index < 0:
        # Either an empty array (fine) or not an array at all.
        with path.open("rb") as handle:
            head = handle.read(64).lstrip()
        if not head.startswith(b"["):
            raise ImportFailed("expected a JSON array of records", path=path)


def iter_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, record)`` from a JSON-lines file; blank lines are skipped."""
    with path.open("r", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ImportFailed(f"malformed JSON ({exc.msg} at column {exc.colno})", path=path, record=f"line {number}") from exc


class RecordReader:
    """Typed access to one record's fields, raising ``ImportFailed`` that names file, record and field."""

    def __init__(self, record: Any, *, path: Path, index: int | str):
        if not isinstance(record, dict):
            raise ImportFailed(f"expected a JSON object, got {type(record).__name__}", path=path, record=index)
        self.record = record
        self.path = path
        self.index = index

    def fail(self, message: str, field_name: str | None = None) -> ImportFailed:
        return ImportFailed(message, path=self.path, record=self.index, field=field_name)

    def get(self, name: str, default: Any = None) -> Any:
        return self.record.get(name, default)

    def text(self, name: str, *, required: bool = True, default: str = "") -> str:
        if name not in self.record or self.record[name] is None:
            if required:
                raise self.fail("missing", name)
            return default
        value = self.record[name]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise self.fail(f"expected a string, got {type(value).__name__}", name)
        if required and not value.strip():
            raise self.fail("is empty", name)
        return value

    def number(self, name: str, *, required: bool = True) -> float | None:
        value = self.record.get(name)
        if value is None:
            if required:
                raise self.fail("missing", name)
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(f"expected a number, got {type(value).__name__}", name)
        if value != value or value in (float("inf"), float("-inf")):
            raise self.fail("is not a finite number", name)
        return float(value)

    def string_list(self, name: str, *, required: bool = True) -> list[str]:
        value = self.record.get(name)
        if value is None:
            if required:
                raise self.fail("missing", name)
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail("expected a list of strings", name)
        return value

    def obj_list(self, name: str, *, required: bool = True) -> list[dict]:
        value = self.record.get(name)
        if value is None:
            if required:
                raise self.fail("missing", name)
            return []
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail("expected a list of objects", name)
        return value


def every(progress: ProgressCallback, step: int = 100) -> ProgressCallback:
    """``progress`` called at most once per ``step`` records (a terminal bar redraw costs more than a record).

    Importers pass steps that 200 divides or that divide 200: the API's import jobs store every 200th count.
    """

    def report(done: int, total: int | None) -> None:
        if done % step == 0 or done == total:
            progress(done, total)

    return report


def batched(records: Iterator[Any], size: int) -> Iterator[list[Any]]:
    """Lists of up to ``size`` consecutive records (spaCy and the database both prefer batches)."""
    batch: list[Any] = []
    for record in records:
        batch.append(record)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
