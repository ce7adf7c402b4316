"""Every value an import stores, checked against the limits of its model field before it is written.

The limits come from the models' ``_meta`` (a ``CharField``'s ``max_length``, the database range of an
integer field, finite floats), so a new field or a changed length needs no second list here. A value over
a limit is an :class:`ImportFailed` naming the record and the field, raised before the row is written
(the database would refuse it only with "value too long", naming neither).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from django.db import connection, models

from .errors import ImportFailed


def field_problem(field: models.Field, value: Any) -> str | None:
    """Why ``value`` cannot be stored in ``field`` (None when it can)."""
    if value is None or callable(value):
        return None
    if isinstance(field, (models.CharField, models.TextField)) and isinstance(value, str):
        if field.max_length is not None and len(value) > field.max_length:
            return f"{len(value)} characters; at most {field.max_length}"
        if "\x00" in value:
            return "contains a NUL character"
    elif isinstance(field, models.IntegerField) and isinstance(value, int) and not isinstance(value, bool):
        low, high = connection.ops.integer_field_range(field.get_internal_type())
        if (low is not None and value < low) or (high is not None and value > high):
            return f"{_short(value)} is out of range [{low}, {high}]"
    elif isinstance(field, models.FloatField) and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an int too large for a float
            finite = False
        if not finite:
            return "is not a finite number"
    return None


def _short(value: int) -> str:
    """An integer for a message: huge ones by their digit count (str() of one refuses above 4300 digits)."""
    digits = value.bit_length() * 0.30103
    return f"a number of about {digits:.0f} digits" if digits > 30 else str(value)


@cache
def _field(model: type[models.Model], name: str) -> models.Field:
    return model._meta.get_field(name)


def check_model_values(
    model: type[models.Model], values: Mapping[str, Any], *, path: str | Path | None = None, record: int | str | None = None,
    names: Mapping[str, str] | None = None,
) -> None:
    """Refuse the first of ``values`` (model field name -> value) that its field cannot store.

    ``names`` maps a model field to the record's field name where they differ (e.g. ``external_id`` -> ``id``).
    """
    names = names or {}
    for name, value in values.items():
        problem = field_problem(_field(model, name), value)
        if problem:
            raise ImportFailed(f"{problem} (stored as {model.__name__}.{name})", path=path, record=record, field=names.get(name, name))
