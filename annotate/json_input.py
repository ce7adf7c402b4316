"""Parsing of JSON that comes from outside (request bodies, imported files), with clean refusals.

Python's parser converts an integer literal of any length (in time quadratic in its length) and refuses one
above 4,300 digits with a message about interpreter settings; it also reads ``NaN`` and ``Infinity``. Here
an integer literal longer than :data:`MAX_INT_DIGITS` and the non-finite constants are refused with a
:class:`ValueError` whose message says what is wrong in words. A plain module: any layer may import it.
"""
from __future__ import annotations

import json
from typing import Any

#: Digits of an integer literal beyond any stored number's range (the largest is a 64-bit integer's 19).
MAX_INT_DIGITS = 40
NUMBER_TOO_LONG = f"numbers have at most {MAX_INT_DIGITS} digits"


class JSONValueRefused(ValueError):
    """A well-formed JSON value that is refused (an over-long integer, NaN, Infinity)."""


def parse_int(literal: str) -> int:
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise JSONValueRefused(f"a number of {digits} digits is out of range; {NUMBER_TOO_LONG}")
    return int(literal)


def refuse_constant(name: str) -> Any:
    raise JSONValueRefused(f"{name} is not a finite number")


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """``json.loads`` with over-long integers and non-finite constants refused (``JSONValueRefused``)."""
    return json.loads(text, parse_int=parse_int, parse_constant=refuse_constant, **kwargs)


def load(stream: Any, **kwargs: Any) -> Any:
    """``json.load`` with the same refusals as :func:`loads`."""
    return json.load(stream, parse_int=parse_int, parse_constant=refuse_constant, **kwargs)
