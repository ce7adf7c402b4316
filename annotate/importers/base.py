"""Shared machinery of the dataset importers: streaming readers, field checks, errors and the report."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson

from annotate import json_input

from . import limits as import_limits
from .errors import ImportFailed

ProgressCallback = Callable[[int, int | None], None]


@dataclass
class ImportReport:
    """What an import did, per kind of object: rows ``created``, rows ``existing`` in the campaign before this
    import (a re-import), and records ``repeated`` in this import (a row this import met before)."""

    campaign: str
    format: str
    records: int = 0
    created: Counter = field(default_factory=Counter)
    existing: Counter = field(default_factory=Counter)
    repeated: Counter = field(default_factory=Counter)
    #: The published benchmark whose released labels came with the data ("" for unpublished data): its gold is public.
    public_labels: str = ""

    def count(self, kind: str, created: bool, repeated: bool = False) -> None:
        (self.created if created else self.repeated if repeated else self.existing)[kind] += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "campaign": self.campaign,
            "format": self.format,
            "records": self.records,
            "created": dict(self.created),
            "existing": dict(self.existing),
            "repeated": dict(self.repeated),
            "public_labels": self.public_labels,
        }

    def summary_line(self) -> str:
        made = ", ".join(f"{n} {k}" for k, n in sorted(self.created.items())) or "nothing new"
        public = (
            f" Its labels are public ({self.public_labels}'s release): gold from them earns no bonus unless the campaign "
            "accepts public labels." if self.public_labels else ""
        )
        return f"{self.records} records read into campaign '{self.campaign}': created {made}.{public}"


def iter_json_array(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, record)`` from a JSON file holding a top-level array, without loading it whole.

    The limits of :mod:`annotate.importers.limits` (size, depth, strings, numbers) apply while it streams.
    """
    limits = import_limits.current()
    import_limits.check_file_size(path, limits)
    index = 0
    try:
        with path.open("rb") as handle:
            events = ijson.basic_parse(handle, use_float=True)
            for index, record in import_limits.build_array_items(events, path=path, limits=limits):
                yield index, record
                index += 1
    except (ijson.JSONError, ijson.IncompleteJSONError) as exc:
        raise ImportFailed(f"malformed JSON ({_parser_message(exc)})", path=path, record=index) from exc


def _parser_message(exc: Exception) -> str:
    """yajl's message without its multi-line excerpt of the file; invalid UTF-8 said in words."""
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    first = str(text).strip().splitlines()[0] if str(text).strip() else type(exc).__name__
    if "UTF8" in first or "utf-8" in first.lower():
        return "the file is not valid UTF-8 text; save it as UTF-8"
    if "overflow" in first:
        return f"a number is out of range; {json_input.NUMBER_TOO_LONG}"
    return first


def iter_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, record)`` from a JSON-lines file; blank lines are skipped.

    Each line is decoded as UTF-8 and parsed on its own, then checked against the import limits.
    """
    limits = import_limits.current()
    import_limits.check_file_size(path, limits)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"line {number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFailed(f"not valid UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); save the file as UTF-8", path=path, record=where) from exc
            if not line.strip():
                continue
            yield number, load_json_text(line, path=path, record=where, limits=limits)


def load_json_text(text: str, *, path: Path, record: int | str | None, limits: import_limits.ImportLimits | None = None) -> Any:
    """Parse one JSON document (a line, or a small file) and apply the import limits to it."""
    limits = limits or import_limits.current()
    try:
        value = json_input.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"malformed JSON ({exc.msg} at line {exc.lineno} column {exc.colno})", path=path, record=record) from exc
    except json_input.JSONValueRefused as exc:  # NaN / Infinity, or an integer with too many digits
        raise ImportFailed(f"refused JSON ({exc})", path=path, record=record) from exc
    except RecursionError as exc:
        raise ImportFailed(f"nested deeper than {limits.max_depth} levels (FACTLAB_IMPORT_MAX_DEPTH)", path=path, record=record) from exc
    return import_limits.check_value(value, path=path, record=record, limits=limits)


def load_json_file(path: Path, *, record: int | str | None = None) -> Any:
    """A whole (small) JSON file, e.g. one FRANK article, within the import limits."""
    limits = import_limits.current()
    import_limits.check_file_size(path, limits)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"not valid UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save the file as UTF-8", path=path, record=record) from exc
    return load_json_text(text, path=path, record=record, limits=limits)


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

    def number(self, name: str, *, required: bool = True, low: float | None = None, high: float | None = None) -> float | None:
        """A finite number, within ``[low, high]`` when the field has a known range."""
        value = self.record.get(name)
        if value is None:
            if required:
                raise self.fail("missing", name)
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(f"expected a number, got {type(value).__name__}", name)
        import_limits.check_number(value, name, path=self.path, record=self.index, limits=import_limits.current())
        if low is not None or high is not None:
            import_limits.check_range(
                value, float("-inf") if low is None else low, float("inf") if high is None else high,
                path=self.path, record=self.index, field=name,
            )
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
