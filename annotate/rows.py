"""Reading the one row a unique key names."""
from __future__ import annotations

from typing import TypeVar

from django.db import connections, router
from django.db.models import Model, QuerySet

Row = TypeVar("Row")


def unique_row(queryset: QuerySet[Row]) -> Row | None:
    """The row a filter on a unique key (a primary key, a one-to-one, a unique pair) finds, or None.

    ``QuerySet.first()`` orders by the model's ordering or its key: for one row that is an ORDER BY the
    database sorts by and Django compiles again on every request, which on the claim and submit paths
    (several such lookups each) costs more than the query itself.
    """
    rows = list(queryset[:1])
    return rows[0] if rows else None


def insert_unless_present(instance: Model) -> bool:
    """Insert ``instance``, unless a row with one of its unique values (a ledger key, say) is there already;
    whether it was inserted (its ``pk`` is set then).

    One statement, ``INSERT … ON CONFLICT DO NOTHING RETURNING`` (PostgreSQL and SQLite alike), where
    ``create()`` inside a savepoint that catches the ``IntegrityError`` costs three round trips; a submission
    appends two or three such rows. Other errors (a missing foreign key, a check constraint) still raise.
    Model signals are not sent (the append-only rows written this way have no receivers).
    """
    meta = instance._meta
    connection = connections[router.db_for_write(type(instance), instance=instance)]
    fields = [field for field in meta.concrete_fields if not (field.primary_key and getattr(instance, field.attname) is None)]
    values = [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]
    quote = connection.ops.quote_name
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))}) ON CONFLICT DO NOTHING RETURNING {quote(meta.pk.column)}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        row = cursor.fetchone()
    if row is None:
        return False
    instance.pk = row[0]
    instance._state.adding, instance._state.db = False, connection.alias
    return True
