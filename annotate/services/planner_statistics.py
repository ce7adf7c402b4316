"""Planner statistics of the tables an import fills, refreshed once it commits.

PostgreSQL plans each query from the statistics ``ANALYZE`` gathers. Autovacuum gathers them, but only on its
next round (a minute by default) and only for tables changed by more than a tenth of their rows since the last
time: until then, the first claims of a freshly imported campaign are planned on tables PostgreSQL believes
empty. On FRANK that picked, for the claim's "items the worker has not had" probe, a scan of every assignment
of the worker per candidate item (20 ms a claim after 180 items, and growing with the worker's history)
instead of one unique-index probe (under 1 ms). An import is a bulk load, so it says so itself.
"""
from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, models, transaction


def refresh_planner_statistics(tables: Iterable[type[models.Model]]) -> None:
    """``ANALYZE`` the tables of these models (PostgreSQL only; other databases plan without it).

    ANALYZE reads a sample of each table (at most 30,000 rows at PostgreSQL's default target), so it costs well
    under a second per table whatever the table's size, and takes no lock that blocks reads or writes."""
    if connection.vendor != "postgresql":
        return
    names = sorted({connection.ops.quote_name(model._meta.db_table) for model in tables})
    if names:
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {', '.join(names)}")


def refresh_planner_statistics_on_commit(tables: Iterable[type[models.Model]]) -> None:
    """:func:`refresh_planner_statistics` once the current transaction commits (what it analyzes is then
    visible; a rolled-back import changed nothing to analyze)."""
    tables = tuple(tables)
    transaction.on_commit(lambda: refresh_planner_statistics(tables))
