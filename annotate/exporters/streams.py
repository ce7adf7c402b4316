"""Byte streams shared by every protocol's exporter."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any


def stream_json_array(records: Iterable[Any]) -> Iterator[bytes]:
    """A JSON array, one record per line, written record by record."""
    yield b"["
    first = True
    for record in records:
        yield (b"\n" if first else b",\n") + json.dumps(record, ensure_ascii=False).encode()
        first = False
    yield b"\n]\n"
