"""What an uploaded file is, read from its content: the format and, where the file says it, the campaign kind.

An admin who uploads BUMP's Task 2 file with the default choices must not get a Task 1 campaign, and a QAGS
file read as FactLab's own JSON lines must not fail with twenty "field 'id': missing" lines: so every dataset
format (``DatasetFormat.recognize``) says whether a sample of a file looks like it, and why. The sample is the
file's head only (:data:`SAMPLE_BYTES`): its first records, its CSV header, or a zip's member names.
"""
from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

SAMPLE_BYTES = 256 * 1024
SAMPLE_RECORDS = 50


@dataclass(frozen=True)
class Sample:
    """A file's head, parsed as far as it goes: JSON records (an array's or JSON lines'), a CSV header, or
    the member names of a zip."""

    name: str
    records: list[dict] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    shape: str = "unknown"  # "json-array", "json-lines", "csv", "zip" or "unknown"

    @property
    def keys(self) -> set[str]:
        """The fields the sampled records have in common (a CSV's header)."""
        if self.header:
            return set(self.header)
        if not self.records:
            return set()
        common = set(self.records[0])
        for record in self.records[1:]:
            common &= set(record)
        return common


@dataclass(frozen=True)
class Recognition:
    """A format's verdict on a sample: ``reason`` (why it fits) and the kind the file implies (None: any)."""

    reason: str
    kind: str | None = None


@dataclass(frozen=True)
class Detection:
    format: str
    kind: str | None
    reason: str


Recognizer = Callable[[Sample], "Recognition | None"]


def read_sample(name: str, handle: IO[bytes]) -> Sample:
    """Parse the head of an upload (the handle is read from where it stands and rewound)."""
    start = handle.tell() if handle.seekable() else 0
    head = handle.read(SAMPLE_BYTES)
    try:
        if head[:4] == b"PK\x03\x04":
            handle.seek(start)
            with zipfile.ZipFile(handle) as archive:
                return Sample(name, members=archive.namelist()[:2000], shape="zip")
        text = head.decode("utf-8", "replace").lstrip("\ufeff")
        stripped = text.lstrip()
        if stripped.startswith("["):
            return Sample(name, records=_array_records(stripped), shape="json-array")
        if stripped.startswith("{"):
            return Sample(name, records=_line_records(stripped), shape="json-lines")
        first_line = text.splitlines()[0] if text.strip() else ""
        if "," in first_line:
            return Sample(name, header=[c.strip() for c in next(csv.reader(io.StringIO(first_line)))], shape="csv")
        return Sample(name)
    except (zipfile.BadZipFile, ValueError, StopIteration, csv.Error):
        return Sample(name)
    finally:
        if handle.seekable():
            handle.seek(start)


def _array_records(text: str) -> list[dict]:
    """The complete objects at the start of a JSON array (the head may end inside one)."""
    decoder = json.JSONDecoder()
    records, position = [], 1
    while len(records) < SAMPLE_RECORDS:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text) or text[position] != "{":
            break
        try:
            value, position = decoder.raw_decode(text, position)
        except ValueError:
            break
        if isinstance(value, dict):
            records.append(value)
    return records


def _line_records(text: str) -> list[dict]:
    records = []
    for line in text.splitlines()[:SAMPLE_RECORDS]:
        try:
            value = json.loads(line)
        except ValueError:
            break  # the head may end inside a line
        if isinstance(value, dict):
            records.append(value)
    return records


def recognize(sample: Sample, recognizers: Mapping[str, Recognizer]) -> list[Detection]:
    """Every format whose recognizer accepts the sample, in the registry's order."""
    found = []
    for name, recognizer in recognizers.items():
        verdict = recognizer(sample)
        if verdict is not None:
            found.append(Detection(name, verdict.kind, verdict.reason))
    return found


def describe(sample: Sample) -> str:
    """What the sample looked like, for an error that names no fitting format."""
    if sample.shape == "zip":
        return f"a zip of {len(sample.members)} members (e.g. {', '.join(sample.members[:3]) or 'none'})"
    if sample.shape == "csv":
        return f"a CSV file with the columns {', '.join(sample.header[:12])}"
    if sample.records:
        return f"{'a JSON array' if sample.shape == 'json-array' else 'JSON lines'} of records with the fields {', '.join(sorted(sample.keys)[:12])}"
    return "no JSON, CSV or zip content that could be read"


def file_name(path: str | Path) -> str:
    return Path(str(path)).name.lower()
