"""The one error of every importer (kept apart so that the limits module can raise it too)."""
from __future__ import annotations

from pathlib import Path
from typing import Any


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
