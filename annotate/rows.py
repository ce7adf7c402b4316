"""Reading the one row a unique key names."""
from __future__ import annotations

from typing import TypeVar

from django.db.models import QuerySet

Row = TypeVar("Row")


def unique_row(queryset: QuerySet[Row]) -> Row | None:
    """The row a filter on a unique key (a primary key, a one-to-one, a unique pair) finds, or None.

    ``QuerySet.first()`` orders by the model's ordering or its key: for one row that is an ORDER BY the
    database sorts by and Django compiles again on every request, which on the claim and submit paths
    (several such lookups each) costs more than the query itself.
    """
    rows = list(queryset[:1])
    return rows[0] if rows else None
