"""The one error of every importer (kept apart so that the limits module can raise it too)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


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

    #: Every record-level problem found by the run (:class:`RecordProblems`); empty for a single error.
    problems: list[dict[str, Any]] = []

    def as_dict(self) -> dict[str, Any]:
        data = {"file": self.path, "record": self.record, "field": self.field, "message": self.detail, "error": str(self)}
        if self.problems:
            data["problems"] = self.problems
        return data


class RecordProblems:
    """The record-level problems of one import run, collected so that one run names them all.

    A record that fails its checks is skipped and its :class:`ImportFailed` kept; the run goes on to find the
    others, and :meth:`raise_if_any` then refuses the whole import (its transaction stores nothing). After
    ``limit`` problems the run stops at once: a file of the wrong kind need not be read to its end.
    """

    def __init__(self, limit: int = 20):
        self.limit = limit
        self.found: list[ImportFailed] = []

    @contextmanager
    def of_record(self) -> Iterator[None]:
        """Run one record's checks and writes; a problem is kept and the record skipped."""
        try:
            yield
        except ImportFailed as exc:
            self.found.append(exc)
            if len(self.found) >= self.limit:
                self.raise_if_any()

    def parse_each(self, rows: Iterable[T], parse: Callable[[T], Any]) -> list[Any]:
        """``parse`` applied to each row; the rows that fail are kept as problems and left out."""
        parsed = []
        for row in rows:
            with self.of_record():
                parsed.append(parse(row))
        return parsed

    def raise_if_any(self) -> None:
        """Refuse the import if any record failed: the first problem's place, every problem listed."""
        if not self.found:
            return
        first = self.found[0]
        if len(self.found) == 1:
            raise first
        more = f"{len(self.found)} records are wrong" + (f" (the run stopped at the first {self.limit})" if len(self.found) >= self.limit else "")
        combined = ImportFailed(
            f"{first.detail} — {more}: " + "; ".join(str(p) for p in self.found), path=first.path, record=first.record, field=first.field,
        )
        combined.problems = [p.as_dict() for p in self.found]
        raise combined
