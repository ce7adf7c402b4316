"""Bounds every import enforces while it reads, so a hostile or broken file costs little and says what is wrong.

The readers in :mod:`annotate.importers.base` apply them to every record of every format: nesting depth
(checked event by event, before a deep value is built), string length, finite numbers of bounded magnitude,
file size. :func:`safe_extract_zip` bounds archives (member count, total uncompressed size, compression
ratio, member names) while it writes them, so a zip bomb stops at the limit. :data:`PATH_ID` is the
strict pattern of ids that may name a file as they are (FRANK's ``hash`` in older exports).

Each limit is a setting (``FACTLAB_IMPORT_*``, see factlab/settings.py and docs/guarantees.md); every
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


#: Bytes a member, or the whole archive, may expand to before its compression ratio is checked: tiny files
#: of repeated characters compress far beyond any sane ratio and harm nothing.
RATIO_FLOOR_BYTES = 64 * 1024
#: Bytes decompressed per read: the limits are checked between reads, so at most this much is held or written past a limit.
ZIP_CHUNK_BYTES = 64 * 1024


def safe_extract_zip(path: Path, target: Path, limits: ImportLimits | None = None) -> int:
    """Extract ``path`` into ``target`` within the limits; returns the bytes written.

    Every limit holds on the bytes actually decompressed, counted chunk by chunk before each write (a header's
    sizes are only used to refuse early): the total (``max_zip_bytes``), each member's size (``max_file_bytes``,
    the limit of any imported file), each member's ratio to its compressed size, and the archive's ratio to
    the zip file's size. The archive's ratio bounds the total written at ``max_zip_ratio`` times the upload's size.
    On a refusal ``target`` is emptied.
    """
    limits = limits or current()
    try:
        return _extract_zip_members(path, target, limits)
    except zipfile.BadZipFile as exc:
        _empty(target)
        raise ImportFailed(f"not a valid zip file ({exc})", path=path) from exc
    except ImportFailed:
        _empty(target)
        raise


def _empty(target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)


def _zip_refusal(message: str, setting: str, path: Path, name: str | None = None) -> ImportFailed:
    return ImportFailed(f"{message} ({setting}); nothing was imported", path=path, field=name)


def _extract_zip_members(path: Path, target: Path, limits: ImportLimits) -> int:
    compressed_total = max(1, path.stat().st_size)
    # What the whole archive may expand to: its ratio limit, never above the total limit.
    budget = min(limits.max_zip_bytes, max(RATIO_FLOOR_BYTES, int(limits.max_zip_ratio * compressed_total)))
    with zipfile.ZipFile(path) as archive:
        members = [info for info in archive.infolist() if not info.is_dir()]
        if len(members) > limits.max_zip_members:
            raise _zip_refusal(f"the zip holds {len(members)} members; the limit is {limits.max_zip_members}", "FACTLAB_IMPORT_MAX_ZIP_MEMBERS", path)
        declared = sum(info.file_size for info in members)
        if declared > limits.max_zip_bytes:
            raise _zip_refusal(f"the zip expands beyond {limits.max_zip_bytes} bytes (its members declare {declared})", "FACTLAB_IMPORT_MAX_UNZIPPED_BYTES", path)
        for info in archive.infolist():
            _safe_member_parts(info.filename, path)
        written = 0
        for info in members:
            name = info.filename
            destination = target.joinpath(*_safe_member_parts(name, path))
            destination.parent.mkdir(parents=True, exist_ok=True)
            member_written = 0
            with archive.open(info) as source, destination.open("wb") as sink:
                while chunk := source.read(ZIP_CHUNK_BYTES):
                    member_written += len(chunk)
                    written += len(chunk)
                    _check_written(written, member_written, info, budget, compressed_total, limits, path)
                    sink.write(chunk)
        return written


def _safe_member_parts(name: str, path: Path) -> tuple[str, ...]:
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if name.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
        raise ImportFailed(f"unsafe member name {name!r} in the zip", path=path, field=name)
    return parts


def _check_written(
    written: int, member_written: int, info: zipfile.ZipInfo, budget: int, compressed_total: int, limits: ImportLimits, path: Path
) -> None:
    """Refuse as soon as the bytes decompressed so far pass a limit (called before each chunk is written)."""
    name = info.filename
    if written > limits.max_zip_bytes:
        raise _zip_refusal(f"the zip expands beyond {limits.max_zip_bytes} bytes", "FACTLAB_IMPORT_MAX_UNZIPPED_BYTES", path, name)
    if member_written > limits.max_file_bytes:
        raise _zip_refusal(f"a member expands beyond {limits.max_file_bytes} bytes", "FACTLAB_IMPORT_MAX_FILE_BYTES", path, name)
    ratio = member_written / max(1, info.compress_size)
    if member_written > RATIO_FLOOR_BYTES and ratio > limits.max_zip_ratio:
        raise _zip_refusal(f"member compressed more than {ratio:.0f}:1; the limit is {limits.max_zip_ratio:g}:1", "FACTLAB_IMPORT_MAX_ZIP_RATIO", path, name)
    if written > budget:
        raise _zip_refusal(
            f"the zip expands more than {written / compressed_total:.0f}:1 ({written} bytes from {compressed_total}); "
            f"the limit is {limits.max_zip_ratio:g}:1", "FACTLAB_IMPORT_MAX_ZIP_RATIO", path,
        )
