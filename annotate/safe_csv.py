"""The one CSV writer of the platform: every CSV FactLab writes (exports, payment and worker sheets, the
report's paper tables) goes through :class:`SafeCsvWriter`, so no cell is run as a formula by a spreadsheet.

A plain module (the standard library only), importable by both apps and by plain-Python code.

A cell is neutralised (OWASP "CSV injection") when, after any leading whitespace (spaces, tabs, newlines,
carriage returns: spreadsheets skip them before looking for a formula), it starts with ``= + - @``, or when
it starts with a tab or carriage return itself; it gets a leading ``'``. Text that is only a number (``-0.25``,
``+3``) stays as it is, as do numbers. A spreadsheet may split a cell where this writer did not mean it
to: on ``;`` or tab (the separators of other locales, where the quotes around a cell are not at a field's
start and do not count) or at a line break inside it. So every part of a cell that follows a separator
(``, ; tab``) or a line break is guarded like a whole cell (``a;=1`` becomes ``a;'=1``), and a cell holding
a separator, a quote, a line break, or leading or trailing spaces is quoted.
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


_SPLITS = re.compile(r"([,;\t\r\n])")


def _formula_lead(text: str) -> bool:
    stripped = text.lstrip(" \t\r\n\x0b\x0c")
    return (text.startswith(FORMULA_LEADS) or stripped.startswith(FORMULA_LEADS)) and not _PLAIN_NUMBER.fullmatch(stripped)


def neutralise_cell(value: Any) -> Any:
    """A CSV cell that no spreadsheet runs as a formula, however it splits it (see the module's docstring)."""
    if not isinstance(value, str):
        return value
    parts = _SPLITS.split(value)  # text, separator, text, ...
    for index in range(2, len(parts), 2):
        if _formula_lead(parts[index]):
            parts[index] = "'" + parts[index]
    value = "".join(parts)
    return "'" + value if _formula_lead(value) else value


#: Characters that make a cell quoted: separators of any locale, the quote, line breaks.
_QUOTED = re.compile(r'[,;\t"\r\n]|^\s|\s$')


def csv_field(value: Any) -> str:
    """One neutralised cell as CSV text (``csv``'s conventions: None empty, quotes doubled)."""
    value = neutralise_cell(value)
    text = "" if value is None else str(value)
    return '"' + text.replace('"', '""') + '"' if _QUOTED.search(text) else text


class SafeCsvWriter:
    """A ``csv.writer`` (``writerow`` returns what ``out.write`` returns) whose cells are neutralised and quoted
    whenever a spreadsheet of any locale could split them."""

    def __init__(self, out: Any) -> None:
        self._out = out

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._out.write(",".join(csv_field(v) for v in row) + "\r\n")

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
