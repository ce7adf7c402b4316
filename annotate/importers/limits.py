"""Bounds every import enforces while it reads, so a hostile or broken file costs little and says what is wrong.

The readers in :mod:`annotate.importers.base` apply them to every record of every format: nesting depth
(checked event by event, before a deep value is built), string length, finite numbers of bounded magnitude,
file size. :func:`safe_extract_zip` bounds archives (member count, total uncompressed size, compression
ratio, member names) while it writes them, so a zip bomb stops at the limit. :data:`PATH_ID` is the
strict pattern of ids that become file names (FRANK's ``hash``).

Each limit is a setting (``FACTLAB_IMPORT_*``, see factlab/settings.py and README "Reliability"); every
refusal is an :class:`ImportFailed` naming the file, the record and the field.
"""
from __future__ import annotations

import math
import re
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from .errors import ImportFailed

# Ids used as file names: letters, digits, '.', '_' and '-', starting with a letter or digit; no '/' or '\\',
# so no '..' segment can climb out of the folder.
PATH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class ImportLimits:
    max_depth: int = 16  # containers nested in a file (the top-level array counts as 1)
    max_string_chars: int = 200_000  # below spaCy's 1,000,000-character pipeline limit
    max_file_bytes: int = 512 * 1024 * 1024
    max_abs_number: float = 1e12  # any number; fields with a known range check it too
    max_zip_members: int = 20_000
    max_zip_bytes: int = 1024 * 1024 * 1024  # total uncompressed
    max_zip_ratio: float = 100.0  # uncompressed / compressed, per member and overall


def current() -> ImportLimits:
    """The limits configured in Django settings, or the defaults outside Django."""
    try:
        from django.conf import settings

        configured = getattr(settings, "FACTLAB_IMPORT_LIMITS", None)
    except Exception:  # plain Python use without configured settings
        configured = None
    return ImportLimits(**configured) if configured else ImportLimits()


def check_file_size(path: Path, limits: ImportLimits | None = None) -> None:
    limits = limits or current()
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise ImportFailed(f"the file is {size} bytes; the limit is {limits.max_file_bytes} (FACTLAB_IMPORT_MAX_FILE_BYTES)", path=path)


def check_string(value: str, where: str, *, path: Path | None, record: int | str | None, limits: ImportLimits) -> None:
    if len(value) > limits.max_string_chars:
        raise ImportFailed(
            f"text of {len(value)} characters; the limit is {limits.max_string_chars} (FACTLAB_IMPORT_MAX_STRING_CHARS)",
            path=path, record=record, field=where or None,
        )
    if "\x00" in value:
        raise ImportFailed("contains a NUL character", path=path, record=record, field=where or None)


def check_number(value: Any, where: str, *, path: Path | None, record: int | str | None, limits: ImportLimits) -> float | int:
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int too large for a float
        finite = False
    if not finite:
        raise ImportFailed("is not a finite number", path=path, record=record, field=where or None)
    if abs(value) > limits.max_abs_number:
        raise ImportFailed(f"{value:.4g} is out of range (at most {limits.max_abs_number:g} in magnitude)", path=path, record=record, field=where or None)
    return value


def check_value(value: Any, *, path: Path | None, record: int | str | None, limits: ImportLimits | None = None, base_depth: int = 0) -> Any:
    """Walk an already parsed record (iteratively: no recursion) and apply the limits; returns it unchanged."""
    limits = limits or current()
    stack: list[tuple[Any, str, int]] = [(value, "", base_depth)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, (dict, list)):
            depth += 1
            if depth > limits.max_depth:
                raise ImportFailed(f"nested deeper than {limits.max_depth} levels (FACTLAB_IMPORT_MAX_DEPTH)", path=path, record=record, field=where or None)
            children = node.items() if isinstance(node, dict) else enumerate(node)
            for key, child in children:
                if isinstance(key, str):
                    check_string(key, where, path=path, record=record, limits=limits)
                    stack.append((child, f"{where}.{key}" if where else key, depth))
                else:
                    stack.append((child, f"{where}[{key}]", depth))
        elif isinstance(node, str):
            check_string(node, where, path=path, record=record, limits=limits)
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            check_number(node, where, path=path, record=record, limits=limits)
    return value


def check_range(value: float, low: float, high: float, *, path: Path | None, record: int | str | None, field: str) -> float:
    if not low <= value <= high:
        raise ImportFailed(f"{value:g} is outside [{low:g}, {high:g}]", path=path, record=record, field=field)
    return value


def check_path_id(value: str, *, path: Path | None, record: int | str | None, field: str) -> str:
    """An id that becomes a file name must match :data:`PATH_ID` (refuses '../', '/', '\\' and the like)."""
    if not PATH_ID.fullmatch(value):
        raise ImportFailed(
            f"{value[:80]!r} is not a valid id (letters, digits, '.', '_', '-'; at most 128 characters)", path=path, record=record, field=field
        )
    return value


# --- Streaming JSON arrays: events from ijson's C parser, built into records here with a depth bound.

_OPEN = {"start_map": dict, "start_array": list}
_CLOSE = {"end_map", "end_array"}


def build_array_items(events: Iterator[tuple[str, Any]], *, path: Path, limits: ImportLimits) -> Iterator[tuple[int, Any]]:
    """Turn ``ijson.basic_parse`` events of a top-level array into ``(index, record)``.

    Depth is counted on the events, so a deeply nested value is refused before it is built (ijson's own
    ``items`` keeps a prefix per level, which costs memory in the square of the depth).
    """
    first = next(events, None)
    if first is None:
        return
    if first[0] != "start_array":
        raise ImportFailed("expected a JSON array of records", path=path)
    index = 0
    stack: list[Any] = []  # containers being built; stack[0] is the current record
    keys: list[str | None] = []  # pending map key per open map (None for arrays)
    names: list[str] = []  # field path per level, for errors
    for event, value in events:
        if event in _OPEN:
            if len(stack) + 2 > limits.max_depth:
                raise ImportFailed(
                    f"nested deeper than {limits.max_depth} levels (FACTLAB_IMPORT_MAX_DEPTH)", path=path, record=index, field=".".join(n for n in names if n) or None
                )
            container = _OPEN[event]()
            if stack:
                _attach(stack[-1], keys[-1], container)
            stack.append(container)
            keys.append(None)
            names.append("")
            continue
        if event in _CLOSE:
            if not stack:  # the end of the top-level array
                return
            done = stack.pop()
            keys.pop()
            names.pop()
            if names:
                names[-1] = ""
            if not stack:
                yield index, done
                index += 1
            continue
        if event == "map_key":
            check_string(value, ".".join(n for n in names[:-1] if n), path=path, record=index, limits=limits)
            keys[-1] = value
            names[-1] = value
            continue
        where = ".".join(n for n in names if n)
        if isinstance(value, str):
            check_string(value, where, path=path, record=index, limits=limits)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            check_number(value, where, path=path, record=index, limits=limits)
        if not stack:
            yield index, value  # a scalar record; RecordReader refuses it with a clear message
            index += 1
        else:
            _attach(stack[-1], keys[-1], value)


def _attach(container: Any, key: str | None, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    else:
        container.append(value)


# --- Zip archives


def safe_extract_zip(path: Path, target: Path, limits: ImportLimits | None = None) -> None:
    """Extract ``path`` into ``target`` within the limits; counts the bytes actually written, not the header's."""
    limits = limits or current()
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > limits.max_zip_members:
                raise ImportFailed(f"the zip holds {len(members)} members; the limit is {limits.max_zip_members} (FACTLAB_IMPORT_MAX_ZIP_MEMBERS)", path=path)
            compressed_total = max(1, path.stat().st_size)
            written = 0
            for info in members:
                name = info.filename
                parts = PurePosixPath(name.replace("\\", "/")).parts
                if name.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
                    raise ImportFailed(f"unsafe member name {name!r} in the zip", path=path, field=name)
                if info.is_dir():
                    continue
                destination = target.joinpath(*parts)
                destination.parent.mkdir(parents=True, exist_ok=True)
                member_written = 0
                with archive.open(info) as source, destination.open("wb") as sink:
                    while chunk := source.read(1024 * 1024):
                        member_written += len(chunk)
                        written += len(chunk)
                        if written > limits.max_zip_bytes:
                            raise ImportFailed(
                                f"the zip expands beyond {limits.max_zip_bytes} bytes (FACTLAB_IMPORT_MAX_UNZIPPED_BYTES)", path=path, field=name
                            )
                        ratio = member_written / max(1, info.compress_size)
                        if member_written > 1024 * 1024 and ratio > limits.max_zip_ratio:
                            raise ImportFailed(
                                f"member compressed {ratio:.0f}:1; the limit is {limits.max_zip_ratio:g}:1 (FACTLAB_IMPORT_MAX_ZIP_RATIO)", path=path, field=name
                            )
                        sink.write(chunk)
            if written > 1024 * 1024 and written / compressed_total > limits.max_zip_ratio:
                raise ImportFailed(
                    f"the zip expands {written / compressed_total:.0f}:1; the limit is {limits.max_zip_ratio:g}:1 (FACTLAB_IMPORT_MAX_ZIP_RATIO)", path=path
                )
    except zipfile.BadZipFile as exc:
        raise ImportFailed(f"not a valid zip file ({exc})", path=path) from exc
    except ImportFailed:
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True, exist_ok=True)
        raise
