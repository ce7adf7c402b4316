"""The one CSV writer of the platform: every CSV FactLab writes (exports, payment and worker sheets, the
report's paper tables) goes through :class:`SafeCsvWriter`, so no cell is run as a formula by a spreadsheet.

A plain module (the standard library only), importable by both apps and by plain-Python code.

A cell is neutralised (OWASP "CSV injection") when, after any leading whitespace (spaces, tabs, newlines,
carriage returns: spreadsheets skip them before looking for a formula), it starts with ``= + - @``, or when
it starts with a tab or carriage return itself; it gets a leading ``'``. Text that is only a number (``-0.25``,
``+3``) stays as it is, as do numbers. Separators, quotes and newlines inside a cell are quoted by ``csv``.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from typing import Any

#: Leading characters that make a spreadsheet read a cell as a formula.
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def neutralise_cell(value: Any) -> Any:
    """A CSV cell that no spreadsheet runs as a formula (see the module's docstring)."""
    if not isinstance(value, str):
        return value
    stripped = value.lstrip(" \t\r\n\x0b\x0c")
    if (value.startswith(FORMULA_LEADS) or stripped.startswith(FORMULA_LEADS)) and not _PLAIN_NUMBER.fullmatch(stripped):
        return "'" + value
    return value


class SafeCsvWriter:
    """``csv.writer`` whose rows are neutralised cell by cell."""

    def __init__(self, out: Any, **kwargs: Any) -> None:
        self._writer = csv.writer(out, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([neutralise_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """The CSV text of ``rows``, every cell neutralised."""
    out = io.StringIO()
    SafeCsvWriter(out).writerows(rows)
    return out.getvalue()


def frame_csv(frame: Any) -> str:
    """A pandas DataFrame as CSV (its header rows and index included, as ``to_csv`` lays them out), every cell
    neutralised: pandas writes the layout, this module's writer every cell."""
    return csv_text(csv.reader(io.StringIO(frame.to_csv())))
